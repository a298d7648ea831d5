package exporter

import (
	"net"
	"sync"
)

// MaxConnections bounds the connections serve holds open at once: a
// Prometheus or two scrape it, each over one kept-alive connection, and
// the probes of the kubelet add one each; 3,000 idle connections once
// took it from 15 to 3,067 goroutines and from 62 to 133 MB.
const MaxConnections = 64

// BoundedListener returns l accepting at most n connections at once:
// Accept waits, leaving the rest in the kernel's backlog, until one of
// those accepted is closed (an idle one is closed by the server's read
// header timeout). Safe for concurrent use.
func BoundedListener(l net.Listener, n int) net.Listener {
	return &boundedListener{Listener: l, slots: make(chan struct{}, n), done: make(chan struct{})}
}

type boundedListener struct {
	net.Listener
	slots     chan struct{}
	done      chan struct{}
	closeOnce sync.Once
	// full, when set (tests), is called each time Accept finds every
	// slot taken and waits.
	full func()
}

func (l *boundedListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	default:
		if l.full != nil {
			l.full()
		}
		select {
		case l.slots <- struct{}{}:
		case <-l.done:
			return nil, net.ErrClosed
		}
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &slotConn{Conn: c, release: sync.OnceFunc(func() { <-l.slots })}, nil
}

func (l *boundedListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// slotConn gives its slot back once closed.
type slotConn struct {
	net.Conn
	release func()
}

func (c *slotConn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}
