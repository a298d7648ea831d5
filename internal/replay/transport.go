package replay

import (
	"fmt"
	"strings"
	"sync"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// The credit a TCP-bound stack returns at once (api.RefreshThreshold), fitted
// to TestTransportGaps (test/e2e): the typical gap times the read rate.
//   - curl: 14 to 15 s at 100 KiB/s, 56 to 59 s at 25 KiB/s, 28 to 29 s at
//     50 KiB/s: 1.4 to 1.5 MiB. A third of the 4 MiB send buffer (the
//     wake-up rule above) is 1.33 MiB; the rest is the client's receive
//     window opening. Single gaps run up to 1.5 times longer (44 s at
//     50 KiB/s, 22 s at 100 KiB/s): the e2e tolerance says so.
//   - client-node: 16 to 21 s at 5 events/s of 22 KB, 28 to 36 s at 2.5:
//     1.6 to 2.1 MB; node reads its socket 64 KiB at a time.
const (
	nghttp2RefreshBytes = 1536 << 10 // 1.5 MiB
	http1RefreshBytes   = 1920 << 10 // 1.875 MiB
)

// The bytes in flight between a blocked handler and a slow TCP reader on
// loopback, measured with ss during TestTransportGaps: the server's Send-Q
// (2.4 to 4.18 MB; tcp_wmem's maximum is 4 MiB) plus the client's Recv-Q
// (curl 0.19 to 0.78 MB, node 0.03 to 0.22 MB, and node-fetch reads
// 64 KiB ahead). They set when a watcher first blocks, not its gaps.
const (
	nghttp2Window = 4608 << 10 // 4.5 MiB
	http1Window   = 4352 << 10 // 4.25 MiB
)

// Profiles lists the transport profiles, in the order help text shows them.
func Profiles() []api.TransportProfile {
	return []api.TransportProfile{api.ProfileGo, api.ProfileNghttp2, api.ProfileHTTP1, api.ProfileHalfWindow}
}

// profileTransport returns the fields a profile sets.
func profileTransport(p api.TransportProfile) (api.Transport, bool) {
	switch p {
	case api.ProfileGo:
		return api.Transport{Window: DefaultWindow, Refresh: api.RefreshGo}, true
	case api.ProfileHalfWindow:
		return api.Transport{Window: DefaultWindow, Refresh: api.RefreshHalfWindow}, true
	case api.ProfileNghttp2:
		return api.Transport{Window: nghttp2Window, Refresh: api.RefreshThreshold, RefreshBytes: nghttp2RefreshBytes}, true
	case api.ProfileHTTP1:
		return api.Transport{Window: http1Window, Refresh: api.RefreshThreshold, RefreshBytes: http1RefreshBytes}, true
	}
	return api.Transport{}, false
}

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
	threshold int64 // api.RefreshThreshold's bytes
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
	// http1: an HTTP/1.1 response (api.ProfileHTTP1), whose end reaches
	// the client behind the bytes in flight; on HTTP/2 the end is a frame
	// of its own (END_STREAM, RST_STREAM) the transport gets at once.
	http1 bool
	// ended: the handler returned, nothing more is written (end).
	ended bool
	// endRead: the client's decoder read past the last byte the server
	// wrote, and so met the end of the response.
	endRead bool

	windowUpdates int64
	bytesSent     int64
}

func newStream(t api.Transport) *stream {
	return &stream{
		window:    int64(t.Window),
		policy:    t.Refresh,
		threshold: int64(t.RefreshBytes),
		lookahead: *t.Lookahead,
		avail:     int64(t.Window),
		credit:    make(chan struct{}, 1),
		http1:     t.Profile == api.ProfileHTTP1,
	}
}

// end records that the server wrote its last byte: the handler returned.
func (s *stream) end() {
	s.mu.Lock()
	s.ended = true
	s.mu.Unlock()
}

// endSeen reports whether the client's decoder met the end of the
// response.
func (s *stream) endSeen() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.endRead
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
// Once the server ended the response, a read that finds no whole event
// left (nothing, or the part of an event a failed write cut) meets the
// end of the response (endRead).
func (s *stream) readOneLocked() bool {
	if len(s.queue) == 0 || s.queue[0].sent != s.queue[0].size {
		if s.ended {
			s.endRead = true
		}
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

// returnCreditLocked is the client's inflow.add for n bytes read. On
// HTTP/1.1 credit is the kernel waking the handler's blocked write: once
// the handler returned there is none to wake.
func (s *stream) returnCreditLocked(n int64) {
	if s.http1 && s.ended {
		return
	}
	s.unsent += n
	switch s.policy {
	case api.RefreshHalfWindow:
		if s.unsent < s.window/2 {
			return
		}
	case api.RefreshThreshold:
		if s.unsent < s.threshold {
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

func joinProfiles() string {
	var s []string
	for _, p := range Profiles() {
		s = append(s, string(p))
	}
	return strings.Join(s, ", ")
}

// ParseProfile reads a transport profile's name.
func ParseProfile(s string) (api.TransportProfile, error) {
	p := api.TransportProfile(s)
	if _, ok := profileTransport(p); !ok {
		return "", fmt.Errorf("unknown transport profile %q: use one of %s", s, joinProfiles())
	}
	return p, nil
}

// SetTransportProfile makes p the scenario's transport: every client
// without a transport of its own then uses p's window and refresh. The
// scenario's lookahead and bookmark size stay. s must be complete (Parse,
// Builtin).
func (s *Scenario) SetTransportProfile(p api.TransportProfile) error {
	t := api.Transport{Profile: p, Lookahead: s.Transport.Lookahead, BookmarkBytes: s.Transport.BookmarkBytes}
	if err := completeTransport(&t, nil); err != nil {
		return err
	}
	s.Transport = t
	return nil
}
