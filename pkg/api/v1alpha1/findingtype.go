package v1alpha1

import "slices"

// FindingType says what a finding is. Each type is one row of
// FindingTypes; internal/diagnosis keeps its judge and its advice.
type FindingType string

// Finding types, in the order of FindingTypes.
const (
	// StuckInitialEvents: a watcher in its initial-events replay, blocked
	// sending for at least a minute: past the 30 s no-progress bound of the
	// proposed fix (kubernetes PR 141899). Nothing upstream ends it before
	// the request times out.
	StuckInitialEvents FindingType = "StuckInitialEvents"
	// SlowInitialEvents: in the replay and blocked sending for under a
	// minute, or seen progressing between two samples.
	SlowInitialEvents FindingType = "SlowInitialEvents"
	// UndecidedInitialEvents: a watch request still initializing (an
	// executing watch in APF dump_requests) for longer than the stall
	// bound, that no evidence decided: no debug=2 dump or trace (profiling
	// off, refused, or withheld), or none of the dump's watchers explains
	// it (a partial dump, a release's watcher loop this build does not
	// recognise). Stuck or slow is not decided; UndecidedReason says why.
	// The report is then incomplete: the run never exits 0.
	UndecidedInitialEvents FindingType = "UndecidedInitialEvents"
	// BlockedStreaming: past the replay, blocked sending for at least a
	// minute; upstream closes it only when a new event arrives for it and
	// cannot be queued (cache_watcher.go add, line 178).
	BlockedStreaming FindingType = "BlockedStreaming"
	// HeldAfterWatcherClosed: a watch handler blocked writing to its client
	// for at least a minute, still holding its APF seats (its APF goroutine
	// waits in (*initializationSignal).Wait), while no cacheWatcher
	// goroutine serves it any more. Measured on a kube-apiserver v1.37.2
	// patched as kubernetes PR 141899 describes (test/e2e
	// TestPatchedServers): the stall timeout closes the watcher
	// (processInterval returns, c.Stop(), close(c.result)), but the handler
	// stays in writeDataFromHandler and the seat stays held until the
	// request ends or the client goes, and the client is not told. Upstream
	// shows the same shape when a watcher is closed while its handler is
	// blocked (the cacher's forget on a full input buffer, say).
	HeldAfterWatcherClosed FindingType = "HeldAfterWatcherClosed"
	// WaitingForWatchCache: a watch request waiting in the cacher for a
	// watch cache that is not ready ((*ready).wait under (*Cacher).Watch).
	// It holds its APF seats like a replay does, but no replay has begun:
	// neither a stuck replay nor a healthy watch.
	WaitingForWatchCache FindingType = "WaitingForWatchCache"
	// WatchClosedByServer: watches of a resource that the cacher closed
	// because their input buffer stayed full (the dispatcher's timeout:
	// k8s.io/apiserver v0.37.2 pkg/storage/cacher/cacher.go:1033-1060,
	// cache_watcher.go:180-231, counted at :190 in
	// apiserver_terminated_watchers_total and logged "Forcing ... watcher
	// close due to unresponsiveness" at :214), and the client that came
	// back for another watch, replaying the initial events again, as far
	// as the evidence ties one (Closures says what each return cost). A
	// client slower than its resource loops: closed, back, closed again.
	WatchClosedByServer FindingType = "WatchClosedByServer"
)

// FindingTypeRow is what the contract, the summary and the documentation
// say about one finding type. Adding a finding type is a constant above and
// a row of FindingTypes (plus its judge and its advice in
// internal/diagnosis, whose test fails until they exist): the summary
// counts it, the summary line names it, and the README's incident card,
// docs/analyze.md's table and the schema's enum are generated from the row
// (go test ./internal/schematest -update).
type FindingTypeRow struct {
	Type FindingType
	// Severities are those a finding of this type can have, worst first.
	Severities []Severity
	// SeverityRule says when it has which: docs/analyze.md's severity cell.
	SeverityRule string
	// Rule is what it is, one sentence: docs/analyze.md's rule cell.
	Rule string
	// Do is what to do about it, one sentence: the README's incident card.
	Do string
	// Count is the Summary field counting findings of this type.
	Count func(*Summary) *int
	// One and Many name one and several such findings in the summary line
	// ("1 slow watch", "2 slow watches").
	One, Many string
}

// FindingTypes returns the finding types, one row each, in the order the
// summary line names them and the advice speaks of them. The slice is the
// caller's; the table it copies cannot be changed from outside.
func FindingTypes() []FindingTypeRow { return slices.Clone(findingTypes) }

// findingTypes is the table FindingTypes returns.
var findingTypes = []FindingTypeRow{
	{
		Type:         StuckInitialEvents,
		Severities:   []Severity{SeverityCritical},
		SeverityRule: "critical",
		Rule:         "In the initial-events replay (`sendWatchCacheEvent` under `processInterval`, or `processInitialEvents` from 1.38), blocked sending a minute or more, or on the same event in two samples a minute apart; without profiling, its APF row executing while its resource's watch events did not grow.",
		Do:           "Act on it: the client stopped reading, so restart or fix CLIENT (see What to restart below).",
		Count:        func(s *Summary) *int { return &s.StuckWatches },
		One:          "watch stuck in the initial-events replay",
		Many:         "watches stuck in the initial-events replay",
	},
	{
		Type:         SlowInitialEvents,
		Severities:   []Severity{SeverityWarning, SeverityInfo},
		SeverityRule: "warning; info when a second sample shows progress",
		Rule:         "In the initial-events replay, blocked under a minute, or blocked on another event in the second sample.",
		Do:           "A warning: run again with two samples more than a minute apart; info: it progressed, nothing to do.",
		Count:        func(s *Summary) *int { return &s.SlowWatches },
		One:          "slow watch",
		Many:         "slow watches",
	},
	{
		Type:         UndecidedInitialEvents,
		Severities:   []Severity{SeverityWarning},
		SeverityRule: "warning, and the report incomplete (exit 2 whatever the fail-on threshold)",
		Rule:         "An executing watch in APF `dump_requests` initializing for longer than 30 s that no evidence decided, its `undecidedReason` saying why (the reasons are listed under the table).",
		Do:           "Decide it with a goroutine dump or a trace where `/debug/pprof` is served (stderr says how); without it, its evidence lines are all there is.",
		Count:        func(s *Summary) *int { return &s.UndecidedWatches },
		One:          "watch initializing too long, stuck or slow not decided",
		Many:         "watches initializing too long, stuck or slow not decided",
	},
	{
		Type:         BlockedStreaming,
		Severities:   []Severity{SeverityWarning},
		SeverityRule: "warning",
		Rule:         "Past the replay (`process`), blocked sending for a minute or more on a client that does not read.",
		Do:           "Check the client named: upstream closes such a watcher only when the next event for it cannot be queued, so on a quiet resource it stays.",
		Count:        func(s *Summary) *int { return &s.BlockedStreaming },
		One:          "blocked streaming watch",
		Many:         "blocked streaming watches",
	},
	{
		Type:         HeldAfterWatcherClosed,
		Severities:   []Severity{SeverityCritical},
		SeverityRule: "critical",
		Rule:         "Phase `closed`: a watch handler blocked writing to its client for a minute or more, its APF goroutine still in `(*initializationSignal).Wait` (seats held), with no `cacheWatcher` goroutine left under it, as a server running kubernetes PR 141899 leaves it after its stall timeout.",
		Do:           "Act on it: the seats stay held until the request ends, so restart or fix CLIENT.",
		Count:        func(s *Summary) *int { return &s.HeldAfterWatcherClosed },
		One:          "watch handler holding APF seats with no watcher left",
		Many:         "watch handlers holding APF seats with no watcher left",
	},
	{
		Type:         WaitingForWatchCache,
		Severities:   []Severity{SeverityCritical, SeverityWarning},
		SeverityRule: "warning; critical after a minute",
		Rule:         "Phase `waiting-for-cache`: a watch request waiting in `(*ready).wait` under `(*Cacher).Watch` for a watch cache that is not ready, holding its APF seats before any replay began.",
		Do:           "Fix storage, not the client: the cacher's initial LIST from etcd fails or is too slow (the Advice line says where to look).",
		Count:        func(s *Summary) *int { return &s.WaitingForWatchCache },
		One:          "watch waiting for a watch cache that is not ready",
		Many:         "watches waiting for a watch cache that is not ready",
	},
	{
		Type:         WatchClosedByServer,
		Severities:   []Severity{SeverityCritical, SeverityWarning},
		SeverityRule: "warning; critical from two closures between the samples (a loop)",
		Rule:         "Phase `relist`: the resource's `apiserver_terminated_watchers_total` grew between two samples of one process, tied to the client whose watch came back (a new APF start time, or early ends in the audit log) as far as the evidence goes.",
		Do:           "Fix or scale CLIENT, or narrow its watch with a selector; restarting the API server does not help.",
		Count:        func(s *Summary) *int { return &s.ClosedWatches },
		One:          "client whose watch the server closed",
		Many:         "clients whose watches the server closed",
	},
}

// FindingTypeOf is the row of FindingTypes for t; false when t has none.
func FindingTypeOf(t FindingType) (FindingTypeRow, bool) {
	for _, r := range findingTypes {
		if r.Type == t {
			return r, true
		}
	}
	return FindingTypeRow{}, false
}
