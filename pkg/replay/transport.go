package replay

import (
	"sync"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// inflowMinRefresh is golang.org/x/net/http2 flow.go:11.
const inflowMinRefresh = 4 << 10

// wireEvent is one watch event on the stream; its stream's mu guards it.
type wireEvent struct {
	size     int64
	sent     int64 // bytes the server has put on the wire
	bookmark bool
	end      bool // the initial-events-end bookmark
}

// stream models one watch response: the API server's handler writing
// events into an HTTP/2 stream, the flow-control window, and the client's
// transport and decoder reading them. Frames are taken to arrive at once
// (the network is never the bottleneck, only flow control is), so the
// window the server sees and the one the client tracks are one number.
//
//	handler ──write(event)──► [window: avail] ──► queue (arrived, unread)
//	   ▲ blocks while avail == 0                        │ decoder reads whole events,
//	   │                                                ▼ lookahead ahead of the app
//	   └──────── WINDOW_UPDATE (policy) ◄──── unsent credit ◄── decoded ──► app
//
// The same stream type serves every column of a replay.
//
// Safe for concurrent use: mu guards every field; the handler goroutine
// writes, the driver reads on the client's behalf.
type stream struct {
	mu        sync.Mutex
	window    int64
	policy    api.RefreshPolicy
	lookahead int
	// avail is the flow-control credit the server may still use.
	avail int64
	// unsent is credit the client has consumed but not yet announced.
	unsent int64
	// queue holds events the server wrote (some partly), not yet read by
	// the decoder, oldest first.
	queue []*wireEvent
	// decoded holds events the decoder read, not yet taken by the app.
	decoded []*wireEvent
	// credit wakes the handler when avail grows.
	credit chan struct{}

	windowUpdates int64
	bytesSent     int64
}

func newStream(t api.Transport) *stream {
	return &stream{
		window:    int64(t.Window),
		policy:    t.Refresh,
		lookahead: *t.Lookahead,
		avail:     int64(t.Window),
		credit:    make(chan struct{}, 1),
	}
}

// startWriteLocked appends an event the handler is about to write.
func (s *stream) startWriteLocked(size int64, bookmark, end bool) *wireEvent {
	e := &wireEvent{size: size, bookmark: bookmark, end: end}
	s.queue = append(s.queue, e)
	return e
}

// writeSomeLocked puts as much of e on the wire as the window allows and
// reports whether e is fully sent.
func (s *stream) writeSomeLocked(e *wireEvent) bool {
	n := min(s.avail, e.size-e.sent)
	s.avail -= n
	e.sent += n
	s.bytesSent += n
	return e.sent == e.size
}

// consume lets the application take up to max events, reading each from
// the body first if the decoder has not yet; then the decoder reads ahead
// up to lookahead events, as client-go's StreamWatcher does (it decodes
// the next event and blocks handing it over). Every body read returns
// credit per the refresh policy. It returns the events taken.
func (s *stream) consume(max int) []*wireEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*wireEvent
	for len(out) < max {
		if len(s.decoded) == 0 && !s.readOneLocked() {
			break
		}
		out = append(out, s.decoded[0])
		s.decoded = s.decoded[1:]
	}
	for len(s.decoded) < s.lookahead && s.readOneLocked() {
	}
	return out
}

// readOneLocked reads the oldest event from the body if it fully arrived.
func (s *stream) readOneLocked() bool {
	if len(s.queue) == 0 || s.queue[0].sent != s.queue[0].size {
		return false
	}
	e := s.queue[0]
	s.queue[0] = nil
	s.queue = s.queue[1:]
	s.decoded = append(s.decoded, e)
	s.returnCreditLocked(e.size)
	return true
}

// readable is how many events the application could take right now.
func (s *stream) readable() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.decoded)
	for _, e := range s.queue {
		if e.sent != e.size {
			break
		}
		n++
	}
	return n
}

// returnCreditLocked is the client's inflow.add for n bytes read.
func (s *stream) returnCreditLocked(n int64) {
	s.unsent += n
	switch s.policy {
	case api.RefreshHalfWindow:
		if s.unsent < s.window/2 {
			return
		}
	default:
		if s.unsent < inflowMinRefresh && s.unsent < s.avail {
			return
		}
	}
	s.avail += s.unsent
	s.unsent = 0
	s.windowUpdates++
	select {
	case s.credit <- struct{}{}:
	default:
	}
}

// streamState is what a report says of a stream at the end. A plain value.
type streamState struct {
	// BufferedBytes are written by the server but not read by the client.
	BufferedBytes int64
	Avail         int64
	WindowUpdates int64
}

func (s *stream) state() streamState {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b int64
	for _, e := range s.queue {
		b += e.sent
	}
	for _, e := range s.decoded {
		b += e.size
	}
	return streamState{BufferedBytes: b, Avail: s.avail, WindowUpdates: s.windowUpdates}
}
