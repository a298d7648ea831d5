package replay

import (
	"fmt"
	"strings"
	"sync"
)

// RefreshPolicy is when an HTTP/2 client returns flow-control credit to the
// server with a WINDOW_UPDATE frame.
type RefreshPolicy string

const (
	// RefreshGo is the policy of Go's HTTP/2 client, which client-go uses
	// (k8s.io/apimachinery/pkg/util/net/http.go:179 configures
	// golang.org/x/net/http2 on the transport). golang.org/x/net v0.61.0
	// http2/flow.go:36-56 (inflow.add), called from transport.go:2261-2264
	// on every read of the response body: credit is held back only while
	// less than inflowMinRefresh = 4 KiB (flow.go:11) is unsent AND the
	// unsent credit is less than what the server may still send; otherwise
	// it is all sent at once (transport.go:2268-2279). net/http's bundled
	// copy is the same (src/net/http/h2_bundle.go:1473, :1507 in Go 1.26.8).
	RefreshGo RefreshPolicy = "go"
	// RefreshHalfWindow holds credit back until half the window was read:
	// OkHttp's flow-control strategies ("Waits until 50% of stream or
	// connection window is reached, before sending a window update",
	// okhttp3.internal.http2.flowcontrol, 16 MiB windows), used by Java
	// Kubernetes clients.
	RefreshHalfWindow RefreshPolicy = "half-window"
	// RefreshThreshold returns credit once Transport.RefreshBytes were read
	// since the last return. It models a stack whose bottleneck is the
	// kernel's TCP buffers rather than an HTTP/2 window (see
	// ProfileNghttp2 and ProfileHTTP1): the window is then the bytes the
	// kernel holds between the handler and the client, and the threshold
	// how much the client must read before the blocked handler's socket
	// write is woken again.
	RefreshThreshold RefreshPolicy = "threshold"
)

// TransportProfile names a client stack whose transport was measured on a
// real kube-apiserver (test/e2e transport_test.go, docs/replay.md
// "Client stacks"): a profile fills the window, refresh and refreshBytes
// a transport leaves empty.
type TransportProfile string

// The profiles.
const (
	// ProfileGo is client-go, and kubectl (client-go's transport): Go's
	// HTTP/2 client, 4 MiB stream window (golang.org/x/net/http2
	// transport.go transportDefaultStreamFlow), RefreshGo. Measured: a
	// reader of 2.5 events/s of 20 KiB leaves its watcher at most 2 s
	// (two dumps a second apart) without a send.
	ProfileGo TransportProfile = "go"
	// ProfileHalfWindow is an HTTP/2 stack that returns credit once half
	// its 4 MiB window was read (OkHttp's strategy, RefreshHalfWindow).
	// Not measured here: no such client runs in the e2e suite.
	ProfileHalfWindow TransportProfile = "half-window"
	// ProfileNghttp2 is curl 7.88 with nghttp2 1.52 and --limit-rate.
	// Rate-limited, curl stops reading its socket between its reads, and
	// its HTTP/2 window is not what binds: measured with ss, the server's
	// send queue is full at tcp_wmem's 4 MiB maximum. Linux wakes a writer
	// blocked on a full send buffer only once a third of it is free
	// (include/net/sock.h sk_stream_min_wspace, wmem_queued/2, checked by
	// sk_stream_write_space in net/core/stream.c): the handler's write,
	// and the watcher's send behind it, wait while the client reads
	// ~1.5 MiB (measured: 14 to 15 s typical gaps at 100 KiB/s, 56 to 59 s
	// at 25 KiB/s). Refresh threshold, nghttp2RefreshBytes; window: the
	// measured bytes in flight.
	ProfileNghttp2 TransportProfile = "nghttp2"
	// ProfileHTTP1 is an HTTP/1.1 client, measured with
	// @kubernetes/client-node 1.4 (node-fetch) blocking its event loop per
	// event: no HTTP/2 flow control, the same TCP buffers as
	// ProfileNghttp2 between the handler and a client that reads its
	// socket slowly, and a larger measured refresh (http1RefreshBytes).
	ProfileHTTP1 TransportProfile = "http1"
)

// The credit a TCP-bound stack returns at once (RefreshThreshold), fitted
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
func Profiles() []TransportProfile {
	return []TransportProfile{ProfileGo, ProfileNghttp2, ProfileHTTP1, ProfileHalfWindow}
}

// profileTransport returns the fields a profile sets.
func profileTransport(p TransportProfile) (Transport, bool) {
	switch p {
	case ProfileGo:
		return Transport{Window: DefaultWindow, Refresh: RefreshGo}, true
	case ProfileHalfWindow:
		return Transport{Window: DefaultWindow, Refresh: RefreshHalfWindow}, true
	case ProfileNghttp2:
		return Transport{Window: nghttp2Window, Refresh: RefreshThreshold, RefreshBytes: nghttp2RefreshBytes}, true
	case ProfileHTTP1:
		return Transport{Window: http1Window, Refresh: RefreshThreshold, RefreshBytes: http1RefreshBytes}, true
	}
	return Transport{}, false
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
	policy    RefreshPolicy
	threshold int64 // RefreshThreshold's bytes
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

func newStream(t Transport) *stream {
	return &stream{
		window:    int64(t.Window),
		policy:    t.Refresh,
		threshold: int64(t.RefreshBytes),
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
	case RefreshHalfWindow:
		if s.unsent < s.window/2 {
			return
		}
	case RefreshThreshold:
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
func ParseProfile(s string) (TransportProfile, error) {
	p := TransportProfile(s)
	if _, ok := profileTransport(p); !ok {
		return "", fmt.Errorf("unknown transport profile %q: use one of %s", s, joinProfiles())
	}
	return p, nil
}

// SetTransportProfile makes p the scenario's transport: every client
// without a transport of its own then uses p's window and refresh. The
// scenario's lookahead and bookmark size stay. s must be complete (Parse,
// Builtin).
func (s *Scenario) SetTransportProfile(p TransportProfile) error {
	t := Transport{Profile: p, Lookahead: s.Transport.Lookahead, BookmarkBytes: s.Transport.BookmarkBytes}
	if err := t.complete(nil); err != nil {
		return err
	}
	s.Transport = t
	return nil
}
