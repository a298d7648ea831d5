package exporter

import (
	"container/list"
	"net"
	"net/http"
	"sync"
)

// MaxConnections bounds the connections serve holds open at once: a
// Prometheus or two scrape it, each over one kept-alive connection, and
// the probes of the kubelet add one each; 3,000 idle connections once
// took it from 15 to 3,067 goroutines and from 62 to 133 MB.
const MaxConnections = 64

// connLimiter is a listener holding at most max connections open, where
// only a connection serving a request keeps its slot: once max are open,
// accepting one more first closes the connection that has waited longest
// without a request in flight (kept alive and idle, or still sending its
// header). Accept waits, holding the connection it accepted and leaving
// the rest in the kernel's backlog, only while every open connection
// serves a request. So 64 idle sockets, or a
// slowloris's 1,500, cannot starve a scrape (issue 35: they held every slot
// for 2 minutes, or 10 s, and two scrapes in a row timed out).
//
// The server must report states to ConnState (http.Server.ConnState).
// Safe for concurrent use.
type connLimiter struct {
	net.Listener
	max       int
	freed     chan struct{} // cap 1: a slot freed or a connection became closable
	done      chan struct{}
	closeOnce sync.Once

	mu      sync.Mutex
	open    int
	waiting list.List // *limitedConn without a request in flight, oldest first
	// full, when set (tests), is called each time Accept, holding a new
	// connection, finds every slot taken by a connection serving a
	// request, and waits.
	full func()
}

// limitConns returns l holding at most n connections open (connLimiter).
func limitConns(l net.Listener, n int) *connLimiter {
	return &connLimiter{Listener: l, max: n, freed: make(chan struct{}, 1), done: make(chan struct{})}
}

// limitedConn is one accepted connection; its fields are guarded by the
// limiter's mu.
type limitedConn struct {
	net.Conn
	l        *connLimiter
	elem     *list.Element // in l.waiting while no request is in flight
	released bool
}

func (l *connLimiter) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	// The slot is taken once the connection is in hand, so the one
	// closed for it is never itself.
	if err := l.take(); err != nil {
		c.Close()
		return nil, err
	}
	lc := &limitedConn{Conn: c, l: l}
	l.mu.Lock()
	lc.elem = l.waiting.PushBack(lc) // no request yet: closable
	l.mu.Unlock()
	return lc, nil
}

// take reserves a slot, closing the oldest connection without a request
// in flight when every slot is taken, or waiting when all serve one.
func (l *connLimiter) take() error {
	for {
		l.mu.Lock()
		if l.open < l.max {
			l.open++
			l.mu.Unlock()
			return nil
		}
		if e := l.waiting.Front(); e != nil {
			victim := e.Value.(*limitedConn)
			l.releaseLocked(victim)
			l.mu.Unlock()
			victim.Conn.Close() // the server's read fails and it lets go
			continue
		}
		full := l.full
		l.mu.Unlock()
		if full != nil {
			full()
		}
		select {
		case <-l.freed:
		case <-l.done:
			return net.ErrClosed
		}
	}
}

// ConnState follows the server's view of each connection: one serving a
// request keeps its slot; one idle or new may be closed for another.
func (l *connLimiter) ConnState(c net.Conn, s http.ConnState) {
	lc, ok := c.(*limitedConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if lc.released {
		return
	}
	switch s {
	case http.StateNew, http.StateIdle:
		if lc.elem == nil {
			lc.elem = l.waiting.PushBack(lc)
			l.signal()
		}
	case http.StateActive, http.StateHijacked:
		if lc.elem != nil {
			l.waiting.Remove(lc.elem)
			lc.elem = nil
		}
	case http.StateClosed:
		l.releaseLocked(lc)
	}
}

// releaseLocked gives c's slot back, once; l.mu must be held.
func (l *connLimiter) releaseLocked(c *limitedConn) {
	if c.released {
		return
	}
	c.released = true
	if c.elem != nil {
		l.waiting.Remove(c.elem)
		c.elem = nil
	}
	l.open--
	l.signal()
}

// signal wakes an Accept waiting for a slot, without blocking.
func (l *connLimiter) signal() {
	select {
	case l.freed <- struct{}{}:
	default:
	}
}

// openConns is how many connections hold a slot.
func (l *connLimiter) openConns() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

func (l *connLimiter) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// Close gives the slot back once closed.
func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.l.mu.Lock()
	c.l.releaseLocked(c)
	c.l.mu.Unlock()
	return err
}
