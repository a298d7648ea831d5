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
	// Window is the stream flow-control window the client announces.
	// Default 4 MiB (client-go).
	Window ByteSize `json:"window,omitempty"`
	// Refresh is when the client returns credit: "go" (golang.org/x/net/http2
	// flow.go inflow.add: once 4 KiB are unsent or the unsent credit reaches
	// what the server may still send) or "half-window" (once half the window
	// was read, as OkHttp's flow-control strategy does). Default "go".
	Refresh RefreshPolicy `json:"refresh,omitempty"`
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
	// less than inflowMinRefresh = 4 KiB (http2 flow.go:11) is unsent AND the
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
