package v1alpha1

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// The parts of a Replay shared with the scenario it replayed: the watch
// cache's counters and the HTTP/2 transport model.

// Counters are the per-resource counters of one watch cache, like upstream's
// metrics (apiserver_terminated_watchers_total, apiserver_init_events_total)
// plus the patch's own. A plain value.
type Counters struct {
	Resource string `json:"resource"`
	// TerminatedWatchers: forgotten by the dispatcher, input full past the
	// time budget.
	TerminatedWatchers int64 `json:"terminatedWatchers"`
	// StalledWatchers: stopped in the initial phase by StallTimeout.
	StalledWatchers int64 `json:"stalledWatchers"`
	// InitEvents: initial events sent.
	InitEvents int64 `json:"initEvents"`
}

// Transport is the model of the HTTP/2 stream between the API server's
// watch handler and the client.
type Transport struct {
	// Profile names a measured client stack (go, nghttp2, http1,
	// half-window) whose window, refresh and refreshBytes fill those left
	// empty here; without one, they are inherited from the scenario's
	// transport. Default none (client-go's values).
	Profile TransportProfile `json:"profile,omitempty"`
	// Window is the stream flow-control window the client announces.
	// Default 4 MiB (client-go).
	Window ByteSize `json:"window,omitempty"`
	// Refresh is when the client returns credit: "go" (golang.org/x/net/http2
	// flow.go inflow.add: once 4 KiB are unsent or the unsent credit reaches
	// what the server may still send) or "half-window" (once half the window
	// was read, as OkHttp's flow-control strategy does) or "threshold"
	// (once refreshBytes were read: a stack bound by its TCP buffers).
	// Default "go".
	Refresh RefreshPolicy `json:"refresh,omitempty"`
	// RefreshBytes is the credit a "threshold" refresh returns at once;
	// only with refresh: threshold, at most the window.
	RefreshBytes ByteSize `json:"refreshBytes,omitempty"`
	// Lookahead is how many events the client's decoder reads from the body
	// ahead of the application: client-go's StreamWatcher decodes one and
	// waits to hand it over. Default 1.
	Lookahead *int `json:"lookahead,omitempty"`
	// BookmarkBytes is the wire size of a bookmark event. Default 200.
	BookmarkBytes ByteSize `json:"bookmarkBytes,omitempty"`
}

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
// real kube-apiserver (test/e2e transport_test.go, docs/replay-research.md
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

// ByteSize is a size in bytes written as a number or a quantity ("20Ki",
// "4Mi", "20KiB").
type ByteSize int64

// MarshalJSON writes the size as a number.
func (b ByteSize) MarshalJSON() ([]byte, error) { return json.Marshal(int64(b)) }

// UnmarshalJSON reads 20480, "20Ki" or "20KiB".
func (b *ByteSize) UnmarshalJSON(data []byte) error {
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		q, err := resource.ParseQuantity(strings.TrimSuffix(s, "B"))
		if err != nil {
			return fmt.Errorf("invalid size %q: use bytes or a quantity such as 20Ki or 4Mi", s)
		}
		v, ok := q.AsInt64()
		if !ok {
			return fmt.Errorf("invalid size %q: not a whole number of bytes", s)
		}
		*b = ByteSize(v)
		return nil
	}
	var v int64
	if err := json.Unmarshal(data, &v); err != nil {
		return fmt.Errorf("invalid size %s: use bytes or a quantity such as \"20Ki\"", data)
	}
	*b = ByteSize(v)
	return nil
}
