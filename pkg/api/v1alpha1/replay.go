package v1alpha1

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// KindReplay is the kind of a replay result. The JSON and YAML field names
// below are a contract for scripts: kind, scenario, columns[].name,
// columns[].clients[] (name, outcome, stoppedAfterSeconds, eventsReceived)
// and columns[].blockedGoroutines do not change within the apiVersion.
const KindReplay = "Replay"

// Outcome is how a client's watch ended up.
type Outcome string

// The outcomes.
const (
	// OutcomeCompleted: the client got its initial events and the watch was
	// still served at the end (or it had no initial events to get).
	OutcomeCompleted Outcome = "completed"
	// OutcomeStopped: the server ended the watch while the client was still
	// connected: the dispatcher closed it, or the stall timeout stopped it.
	OutcomeStopped Outcome = "stopped"
	// OutcomeBlocked: at the end the watcher goroutine was still parked in
	// sendWatchCacheEvent, the client not done.
	OutcomeBlocked Outcome = "blocked"
	// OutcomeDisconnected: the client closed the request itself (its model,
	// or its request timeout) before any of the above.
	OutcomeDisconnected Outcome = "disconnected"
)

// Replay is the outcome of a replay: one column per backend. Like every
// type of this file, a plain value, safe to share once the replay returned.
type Replay struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`
	// Scenario is the scenario's name.
	Scenario    string `json:"scenario"`
	Description string `json:"description,omitempty"`
	// DurationSeconds is the virtual time replayed.
	DurationSeconds     float64   `json:"durationSeconds"`
	TickSeconds         float64   `json:"tickSeconds"`
	StallTimeoutSeconds float64   `json:"stallTimeoutSeconds"`
	Transport           Transport `json:"transport"`
	Columns             []Column  `json:"columns"`
	Verdict             Verdict   `json:"verdict"`
	// Timeline is set when the replay was asked for one (pkg/replay
	// Options.Timeline).
	Timeline *Timeline `json:"timeline,omitempty"`
}

// Column is what one backend did with the scenario.
type Column struct {
	Name    string         `json:"name"`
	Clients []ClientResult `json:"clients"`
	// BlockedGoroutines counts cacheWatcher goroutines blocked sending at
	// the end, read from a goroutine dump with pkg/watches.
	BlockedGoroutines int `json:"blockedGoroutines"`
	// WatcherGoroutines counts the cacheWatcher goroutines alive at the end.
	WatcherGoroutines int `json:"watcherGoroutines"`
	// HandlersBlockedInWrite counts request handlers still blocked writing
	// to a client that does not read: pr141899 does not free those,
	// complete does.
	HandlersBlockedInWrite int `json:"handlersBlockedInWrite"`
	// HeldObjects and HeldBytes are the distinct object versions the
	// blocked initial-phase watchers keep reachable through their snapshots.
	HeldObjects int   `json:"heldObjects"`
	HeldBytes   int64 `json:"heldBytes"`
	// APFSeatSeconds sums, over clients, seats times the time they were
	// held: from the start of the watch until it was initialized or ended.
	APFSeatSeconds float64    `json:"apfSeatSeconds"`
	Counters       []Counters `json:"counters"`
}

// ClientResult is one client in one column.
type ClientResult struct {
	Name  string `json:"name"`
	Model string `json:"model"`
	Scope string `json:"scope"`
	// Transport is set when the client has its own HTTP/2 model.
	Transport *Transport `json:"transport,omitempty"`
	Outcome   Outcome    `json:"outcome"`
	// StoppedAfterSeconds: for stopped, how long after its start.
	StoppedAfterSeconds *float64 `json:"stoppedAfterSeconds,omitempty"`
	// StoppedAtSeconds: for stopped, the replay time.
	StoppedAtSeconds *float64 `json:"stoppedAtSeconds,omitempty"`
	// DisconnectedAtSeconds: for disconnected, the replay time.
	DisconnectedAtSeconds *float64 `json:"disconnectedAtSeconds,omitempty"`
	// EventsReceived counts the ADDED/MODIFIED/DELETED events the
	// application read; bookmarks are counted apart.
	EventsReceived    int64 `json:"eventsReceived"`
	BookmarksReceived int64 `json:"bookmarksReceived"`
	// InitialEvents is how many initial events the client had to get.
	InitialEvents int `json:"initialEvents"`
	// InitialDoneAtSeconds: when it had them all (and the
	// initial-events-end bookmark, if asked for).
	InitialDoneAtSeconds *float64 `json:"initialDoneAtSeconds,omitempty"`
	StartSeconds         float64  `json:"startSeconds"`
	// LastProgressSeconds: the last time the handler took an event from the
	// watcher's result channel (for stopped clients, before the stop).
	LastProgressSeconds *float64 `json:"lastProgressSeconds,omitempty"`
	// WindowUpdates counts the WINDOW_UPDATE frames the client sent.
	WindowUpdates  int64   `json:"windowUpdates"`
	APFSeatSeconds float64 `json:"apfSeatSeconds"`
	// HandlerBlockedInWrite: at the end the request's handler was still
	// blocked writing to the client (it holds the request, and the seats
	// if the watch was never initialized).
	HandlerBlockedInWrite bool `json:"handlerBlockedInWrite"`
	// ClientTold: the server ended the response stream while the client
	// was connected (END_STREAM, or RST_STREAM from the complete fix), so
	// the client can see its watch end and re-list.
	ClientTold bool `json:"clientTold"`
}

// Verdict compares the columns.
type Verdict struct {
	// Summary is one sentence.
	Summary string `json:"summary"`
	// Fidelity is "identical" when upstream and unpatched agree on every
	// client's outcome and on blocked goroutines, else "different".
	Fidelity string `json:"fidelity,omitempty"`
	// Freed lists clients blocked unpatched whose watcher the stall
	// timeout stopped (pr141899 and complete stop the same ones).
	Freed []string `json:"freed,omitempty"`
	// Cut lists clients that complete unpatched but the stall timeout
	// stopped: it cut a client that was progressing.
	Cut []string `json:"cut,omitempty"`
	// HeldByPR141899 lists the freed clients whose handler pr141899 left
	// blocked writing, holding the request; ToldByComplete those complete
	// told (their stream ended).
	HeldByPR141899 []string `json:"heldByPR141899,omitempty"`
	ToldByComplete []string `json:"toldByComplete,omitempty"`
	// Notes say what else differs.
	Notes []string `json:"notes,omitempty"`
}

// Timeline is a per-tick series of blocked watcher goroutines per column.
type Timeline struct {
	Seconds []float64        `json:"seconds"`
	Series  []TimelineSeries `json:"series"`
}

// TimelineSeries is one column's series.
type TimelineSeries struct {
	Column  string `json:"column"`
	Blocked []int  `json:"blocked"`
}

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
