package replay

import (
	"bytes"
	"context"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"

	"github.com/watch-doctor/watch-doctor/internal/cacher/park"
)

// requestContext is a watch request's context: Done closes when the client
// disconnects (or the replay ends), and Deadline reports the request's
// virtual deadline without ever firing on the wall clock; the handler
// enforces the timeout on the replay clock, as the API server's watch
// handler does with its own timer.
//
// Safe for concurrent use.
type requestContext struct {
	context.Context
	deadline time.Time
}

func (c *requestContext) Deadline() (time.Time, bool) { return c.deadline, !c.deadline.IsZero() }

// The waits of a handler goroutine, published through park.Spot.
const (
	// hWaitEvent: on the result channel (and the request's end and its
	// timeout, whose deadline is on the replay clock).
	hWaitEvent park.Kind = iota + 1
	// hWaitCredit: in a write, on flow-control credit (and the request's
	// end).
	hWaitCredit
)

// endReason is why a handler returned.
type endReason int

const (
	// The zero value: the handler has not returned.
	_ endReason = iota
	// endResultClosed: the watcher closed its result channel.
	endResultClosed
	// endDisconnected: the client went away.
	endDisconnected
	// endTimeout: the request's timeout fired between two events.
	endTimeout
	// endWatchError: the watch could not be opened.
	endWatchError
	// endStreamReset: the stall hook ended the response stream (the
	// complete fix: RST_STREAM); the write in progress failed.
	endStreamReset
)

// handler is one watch request's handler goroutine, the replay's stand-in
// for the API server's WatchServer.HandleHTTP (k8s.io/apiserver
// endpoints/handlers/watch.go:362-481): it opens the watch, so the watcher
// goroutine is its child, takes events from the result channel one at a
// time and writes each into the stream, blocking while the flow-control
// window is closed, as writeDataFromHandler does. It does not watch the
// timeout while blocked in a write: neither does the real one.
//
// Thread safety: the fields below park are written by the handler goroutine
// before exited closes, or guarded by stream.mu (lastRecv, blockedInWrite);
// park and received are atomics the driver reads.
type handler struct {
	backend    Backend
	clock      clock.WithTicker
	req        WatchRequest
	ctx        *requestContext
	cancel     context.CancelFunc
	timeout    time.Duration
	st         *stream
	bookmarkSz int64

	w        watch.Interface
	gid      int64
	received atomic.Int64
	park     park.Spot[struct{}]
	exited   chan struct{}

	end    endReason
	endAt  time.Time
	err    error
	closed atomic.Bool // the result channel was seen closed

	// reset closes when the stall hook ends the stream (resetStream).
	reset     chan struct{}
	resetOnce sync.Once

	// initialOver is set by the driver once the client had its initial
	// events: gaps after that are not counted in longestGap.
	initialOver atomic.Bool

	// guarded by st.mu
	lastRecv       time.Time
	blockedInWrite bool
	// longestGap is the longest time between two events taken from the
	// result channel during the initial events: how long the watcher's
	// send made no progress, the gap the stall timeout measures.
	longestGap time.Duration
}

// serve is the handler goroutine. started receives nil once the watch is
// open, or the error opening it.
func (h *handler) serve(started chan<- error) {
	defer close(h.exited)
	defer func() {
		h.endAt = h.clock.Now()
		h.st.end()
		h.park.Set(park.Exited, time.Time{}, nil)
	}()
	h.gid = GoroutineID()
	w, err := h.backend.Watch(h.ctx, h.req)
	if err != nil {
		h.end, h.err = endWatchError, err
		started <- err
		return
	}
	h.w = w
	started <- nil
	// The request is over when the handler returns (endpoints/handlers/get.go:299).
	defer w.Stop()

	var timeoutC <-chan time.Time
	var deadline time.Time
	if h.timeout > 0 {
		t := h.clock.NewTimer(h.timeout)
		defer t.Stop()
		timeoutC = t.C()
		deadline = h.clock.Now().Add(h.timeout)
	}
	for {
		h.park.Set(hWaitEvent, deadline, nil)
		select {
		case ev, ok := <-w.ResultChan():
			h.park.Set(park.Running, time.Time{}, nil)
			if !ok {
				h.closed.Store(true)
				h.end = endResultClosed
				return
			}
			h.received.Add(1)
			if !h.write(ev) {
				h.end = endDisconnected
				if h.isReset() {
					h.end = endStreamReset
				}
				return
			}
			select {
			case <-timeoutC:
				h.end = endTimeout
				return
			default:
			}
		case <-h.ctx.Done():
			h.park.Set(park.Running, time.Time{}, nil)
			h.end = endDisconnected
			return
		case <-h.reset:
			h.park.Set(park.Running, time.Time{}, nil)
			h.end = endStreamReset
			return
		case <-timeoutC:
			h.park.Set(park.Running, time.Time{}, nil)
			h.end = endTimeout
			return
		}
	}
}

// write puts one event on the stream, blocking while the window is closed.
// It returns false if the client disconnected or the stream was reset
// meanwhile.
func (h *handler) write(ev watch.Event) bool {
	info := h.backend.Inspect(ev)
	size := info.Bytes
	if info.Bookmark {
		size = h.bookmarkSz
	}
	s := h.st
	s.mu.Lock()
	now := h.clock.Now()
	if !h.lastRecv.IsZero() && !h.initialOver.Load() {
		h.longestGap = max(h.longestGap, now.Sub(h.lastRecv))
	}
	h.lastRecv = now
	if h.isReset() {
		s.mu.Unlock()
		return false
	}
	e := s.startWriteLocked(size, info.Bookmark, info.InitialEventsEnd)
	for !s.writeSomeLocked(e) {
		h.blockedInWrite = true
		s.mu.Unlock()
		h.park.Set(hWaitCredit, time.Time{}, nil)
		select {
		case <-s.credit:
			h.park.Set(park.Running, time.Time{}, nil)
		case <-h.ctx.Done():
			h.park.Set(park.Running, time.Time{}, nil)
			s.mu.Lock()
			h.blockedInWrite = false
			s.mu.Unlock()
			return false
		case <-h.reset:
			// writeDataFromHandler returns errStreamClosed once the
			// stream is reset (golang.org/x/net/http2 server.go:1026).
			h.park.Set(park.Running, time.Time{}, nil)
			s.mu.Lock()
			h.blockedInWrite = false
			s.mu.Unlock()
			return false
		}
		s.mu.Lock()
	}
	h.blockedInWrite = false
	s.mu.Unlock()
	return true
}

// quiescent reports whether the handler is parked where nothing but the
// driver, the watcher or the clock can wake it. alive says whether its
// watcher goroutine still runs (a closed result channel wakes it).
func (h *handler) quiescent(now time.Time, alive func(watch.Interface) bool) bool {
	v, ok := h.park.Read()
	if !ok {
		return false
	}
	switch v.Kind {
	case park.Exited:
	case hWaitEvent:
		if len(h.w.ResultChan()) > 0 || h.ctx.Err() != nil || v.Due(now) || !alive(h.w) || h.isReset() {
			return false
		}
	case hWaitCredit:
		h.st.mu.Lock()
		avail := h.st.avail
		h.st.mu.Unlock()
		if avail > 0 || len(h.st.credit) > 0 || h.ctx.Err() != nil || h.isReset() {
			return false
		}
	default:
		return false
	}
	return h.park.Unchanged(v)
}

// resetStream is the request's stall hook (WatchRequest.OnStall): it ends
// the response stream, as the complete fix's write deadline does, waking a
// handler blocked writing. Called from the watcher goroutine; idempotent.
func (h *handler) resetStream() {
	h.resetOnce.Do(func() { close(h.reset) })
}

func (h *handler) isReset() bool {
	select {
	case <-h.reset:
		return true
	default:
		return false
	}
}

// clientTold reports whether the client was told its watch ended while it
// was still connected: the handler returned with the stream ended by the
// server (END_STREAM after the result channel closed or at the timeout, or
// RST_STREAM from the stall hook). On HTTP/2 those frames reach the
// transport at once. On HTTP/1.1 the end (the last chunk, or the FIN of
// the connection net/http closes when a write failed) is queued behind
// the bytes in flight, so the client is told only once it has read them:
// a client that stopped reading never is (measured on the real complete
// server: test/e2e TestPatchedServers, docs/replay-research.md).
func (h *handler) clientTold() bool {
	if !h.serverEnded() {
		return false
	}
	return !h.st.http1 || h.st.endSeen()
}

// serverEnded reports whether the handler returned and the server, not
// the client, ended the response.
func (h *handler) serverEnded() bool {
	if !h.done() {
		return false
	}
	switch h.end {
	case endResultClosed, endTimeout, endStreamReset:
		return true
	}
	return false
}

func (h *handler) done() bool {
	select {
	case <-h.exited:
		return true
	default:
		return false
	}
}

// writeState is what the driver reads of a handler under the stream lock.
func (h *handler) writeState() (lastRecv time.Time, blocked bool) {
	h.st.mu.Lock()
	defer h.st.mu.Unlock()
	return h.lastRecv, h.blockedInWrite
}

// longestInitialGap returns the longest gap between two events the handler
// took during the initial events.
func (h *handler) longestInitialGap() time.Duration {
	h.st.mu.Lock()
	defer h.st.mu.Unlock()
	return h.longestGap
}

var goroutineBufPool = sync.Pool{New: func() any { b := make([]byte, 64); return &b }}

// GoroutineID returns the calling goroutine's id, read from the header
// runtime.Stack prints ("goroutine 123 [running]:"). A replay links a
// watcher goroutine to its client through the id of the handler goroutine
// that started it ("created by ... in goroutine N").
func GoroutineID() int64 {
	bp := goroutineBufPool.Get().(*[]byte)
	defer goroutineBufPool.Put(bp)
	b := (*bp)[:runtime.Stack(*bp, false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, _ := strconv.ParseInt(string(b), 10, 64)
	return id
}
