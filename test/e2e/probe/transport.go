package probe

import (
	"slices"
	"strings"
)

// The transports a watch is served over, told apart by the bottom frame of
// its handler goroutine.
const (
	TransportH2 = "HTTP/2"
	TransportH1 = "HTTP/1.1"
)

// Frames that tell a watch request's goroutines apart (k8s.io/apiserver
// v0.37.2, golang.org/x/net/http2, net/http of the Go the server was built
// with).
const (
	// H2RunHandler is the bottom frame of an HTTP/2 request's handler
	// goroutine, H1Serve that of an HTTP/1.1 connection's goroutine, which
	// runs its requests' handlers.
	H2RunHandler = "golang.org/x/net/http2.(*serverConn).runHandler"
	// StdH2RunHandler is its name in Go 1.27's net/http HTTP/2 server
	// (kube-apiserver v1.38).
	StdH2RunHandler = "net/http/internal/http2.(*serverConn).runHandler"
	H1Serve         = "net/http.(*conn).serve"
	// WatchServeHTTP is the frame of a watch handler serving its stream.
	WatchServeHTTP = "k8s.io/apiserver/pkg/endpoints/handlers.(*WatchServer).HandleHTTP"
	// APFWait is where APF's goroutine of a watch request waits for the
	// watch to be initialized, holding the request's seats
	// (priority-and-fairness.go:218); it is a child of the handler
	// goroutine.
	APFWait = "k8s.io/apiserver/pkg/util/flowcontrol.(*initializationSignal).Wait"
)

// eventWrites are the frames of a watch handler writing an event: blocked
// on HTTP/2 flow control, or in a socket write on HTTP/1.1 (TLS over the
// connection, parked in internal/poll.runtime_pollWait), or encoding the
// event it is about to write (a paced reader's handler, woken by the
// client's read, encodes the next event before it blocks again).
var eventWrites = []string{WriteDataFromHandler, StdWriteDataFromHandler, "crypto/tls.(*Conn).Write", "internal/poll.(*FD).Write",
	"k8s.io/apiserver/pkg/endpoints/handlers.(*watchEncoder).Encode"}

// WatchGoroutines are the goroutines of the watch requests of one
// transport in one dump.
type WatchGoroutines struct {
	// Watchers: watcher goroutines still replaying initial events
	// (InitialEventsWatchers), blocked sending or between two sends.
	Watchers int
	// Writers: watch handlers (WatchServeHTTP) writing an event
	// (eventWrites), not waiting for the next one, of watches still in
	// their initial events (InitialEventsHandlers).
	Writers int
	// APFWaits: APF goroutines waiting for the watch to be initialized.
	APFWaits int
}

// CountWatchGoroutines counts the watch goroutines of each transport. A
// goroutine's transport is that of its handler goroutine: the watcher's
// and the APF waiter's parent ("created by ... in goroutine N").
// Goroutines whose handler is not in the dump count under "".
func CountWatchGoroutines(gs []Goroutine) map[string]WatchGoroutines {
	transport := map[int]string{}
	for _, g := range gs {
		switch {
		case slices.Contains(g.Functions, H2RunHandler), slices.Contains(g.Functions, StdH2RunHandler):
			transport[g.ID] = TransportH2
		case slices.Contains(g.Functions, H1Serve):
			transport[g.ID] = TransportH1
		}
	}
	initial := InitialEventsHandlers(gs)
	out := map[string]WatchGoroutines{}
	add := func(id int, f func(*WatchGoroutines)) {
		c := out[transport[id]]
		f(&c)
		out[transport[id]] = c
	}
	for _, g := range InitialEventsWatchers(gs) {
		add(g.ParentID, func(c *WatchGoroutines) { c.Watchers++ })
	}
	for _, g := range gs {
		if len(g.Functions) > 0 && g.Functions[0] == APFWait {
			add(g.ParentID, func(c *WatchGoroutines) { c.APFWaits++ })
		}
		if initial[g.ID] && slices.ContainsFunc(g.Functions, func(f string) bool { return strings.HasSuffix(f, WatchServeHTTP) }) &&
			slices.ContainsFunc(g.Functions, func(f string) bool { return slices.Contains(eventWrites, f) }) {
			add(g.ID, func(c *WatchGoroutines) { c.Writers++ })
		}
	}
	return out
}

// InitialEventsHandlers returns the IDs of the handler goroutines whose
// watch is still in its initial events: the parents of an APF goroutine
// waiting for WatchInitialized or of an initial-events watcher
// (InitialEventsWatchers). A handler stays one when a patched server's
// stall timeout ends its watcher, since APF's wait stays. The server's own
// loopback watches (exempt from APF, past their initial events) are not:
// a dump can catch one writing an event, which a whole CI run once counted
// as a third HTTP/2 writer beside the two clients'.
func InitialEventsHandlers(gs []Goroutine) map[int]bool {
	out := map[int]bool{}
	for _, g := range InitialEventsWatchers(gs) {
		out[g.ParentID] = true
	}
	for _, g := range gs {
		if len(g.Functions) > 0 && g.Functions[0] == APFWait {
			out[g.ParentID] = true
		}
	}
	delete(out, 0) // no parent named
	return out
}
