package v1alpha1

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
	// Timeline is set when the replay was asked for one (internal/replay
	// Options.Timeline).
	Timeline *Timeline `json:"timeline,omitempty"`
}

// Column is what one backend did with the scenario.
type Column struct {
	Name string `json:"name"`
	// Release is the k8s.io/apiserver release whose cacher served the
	// upstream column (v0.37.2 in process, or v0.38.0-beta.0 from the
	// subprocess of `replay --upstream-release v1.38`); for ours, the
	// release whose watcher loop they model when it is not the default
	// (v1.38 for a `release: v1.38` scenario), else empty.
	Release string         `json:"release,omitempty"`
	Clients []ClientResult `json:"clients"`
	// BlockedGoroutines counts cacheWatcher goroutines blocked sending at
	// the end, read from a goroutine dump with internal/watches.
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
	APFSeatSeconds float64 `json:"apfSeatSeconds"`
	// Closures, Returns and ReturnSeatSeconds sum the clients' own
	// (ClientResult): watches the server ended while their client was
	// connected, the watches clients that relist opened again, and the APF
	// seat-seconds those returns took.
	Closures          int        `json:"closures,omitempty"`
	Returns           int        `json:"returns,omitempty"`
	ReturnSeatSeconds float64    `json:"returnSeatSeconds,omitempty"`
	Counters          []Counters `json:"counters"`
}

// Column names, in report order. Each column's assumptions:
//   - upstream: k8s.io/apiserver v0.37.2's own cacher (internal/replay/upstream),
//     no stall timeout;
//   - unpatched: this repository's internal/cacher, no stall timeout; checked
//     against upstream by the differential suite;
//   - pr141899: internal/cacher with the scenario's stall timeout, as kubernetes
//     PR 141899 describes it: a no-progress timer in processInterval only,
//     restarted by every successful send; on a stall the watcher goroutine
//     returns and closes its result channel. Nothing else: WatchInitialized
//     is not signalled, so the request keeps its APF seats until its handler
//     returns, and the handler, blocked writing to a client that does not
//     read, is not woken, so the client is not told (measured on a real
//     patched kube-apiserver: test/e2e TestPatchedServers);
//   - complete: as pr141899, and the stall also ends the response stream
//     (watch-doctor's fix, test/e2e/patches: a write deadline in the past
//     on the response, RST_STREAM on HTTP/2): the handler returns, which
//     releases the seats, and an HTTP/2 client is told at once. An HTTP/1.1
//     client (transport profile http1) is told only once it has read the
//     bytes in flight, which the server's FIN follows, so one that stopped
//     reading is never told (measured: test/e2e TestPatchedServers,
//     docs/replay-research.md).
//
// In every column an HTTP/1.1 client learns that the server ended its
// response (the handler returned: the result channel closed, the request
// timed out, the stall) only behind the bytes in flight; an HTTP/2 client
// at once.
const (
	ColumnUpstream  = "upstream"
	ColumnUnpatched = "unpatched"
	ColumnPR141899  = "pr141899"
	ColumnComplete  = "complete"
)

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
	// LongestNoProgressSeconds: during its initial events, the longest
	// time the handler went without taking an event from the watcher (the
	// watcher's send made no progress: what the stall timeout measures),
	// counting the gap still running at a stop or at the end. Set for
	// clients with initial events.
	LongestNoProgressSeconds *float64 `json:"longestNoProgressSeconds,omitempty"`
	// WindowUpdates counts the WINDOW_UPDATE frames the client sent.
	WindowUpdates  int64   `json:"windowUpdates"`
	APFSeatSeconds float64 `json:"apfSeatSeconds"`
	// Closures counts the client's watches the server ended while it was
	// connected: the dispatcher closed the watcher, or the stall timeout
	// stopped it. Counted over every watch of a client that relists.
	Closures int `json:"closures,omitempty"`
	// Returns counts the times a client that relists (scenario
	// `relist: true`) watched again after the server ended its watch,
	// each a new request replaying its initial events from scratch;
	// ReturnSeatSeconds is the part of APFSeatSeconds those requests held.
	// The other figures of the client add up over all its watches, except
	// the outcome, the stop or disconnect time and the last progress,
	// which are its last watch's, and InitialDoneAtSeconds, the first time
	// one of its watches had its initial events.
	Returns           int     `json:"returns,omitempty"`
	ReturnSeatSeconds float64 `json:"returnSeatSeconds,omitempty"`
	// HandlerBlockedInWrite: at the end the request's handler was still
	// blocked writing to the client (it holds the request, and the seats
	// if the watch was never initialized).
	HandlerBlockedInWrite bool `json:"handlerBlockedInWrite"`
	// ClientTold: the server ended the response stream while the client
	// was connected (END_STREAM, or RST_STREAM from the complete fix), so
	// the client can see its watch end and re-list. Over HTTP/1.1 (profile
	// http1), only once the client has read the bytes in flight, behind
	// which the end comes.
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

// Timeline is a per-tick series per column: blocked watcher goroutines,
// handlers blocked writing, APF seats held, and each client's state.
type Timeline struct {
	Seconds []float64        `json:"seconds"`
	Series  []TimelineSeries `json:"series"`
}

// TimelineSeries is one column's series.
type TimelineSeries struct {
	Column string `json:"column"`
	// Blocked has one value per tick of Timeline.Seconds.
	Blocked []int `json:"blocked"`
	// Clients are the column's clients, in the order of Column.Clients,
	// each as the steps of its state.
	Clients []TimelineClient `json:"clients"`
}

// TimelineClient is one client's state over time in one column: one step
// per tick at which it changed, sampled after the tick's reads and changes.
// Before its first step a client holds nothing.
type TimelineClient struct {
	Name  string         `json:"name"`
	Steps []TimelineStep `json:"steps"`
}

// TimelineStep is a client's state from AtSeconds until its next step.
type TimelineStep struct {
	AtSeconds float64 `json:"atSeconds"`
	// Watcher: its cacheWatcher goroutine is alive.
	Watcher bool `json:"watcher"`
	// HandlerBlockedInWrite: its handler is blocked writing to it.
	HandlerBlockedInWrite bool `json:"handlerBlockedInWrite"`
	// Seats are the APF seats its request holds: from the start of the
	// watch until it is initialized or its handler returns.
	Seats float64 `json:"seats"`
	// Told: it has been told its watch ended (ClientResult.ClientTold).
	Told bool `json:"told"`
}
