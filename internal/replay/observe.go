package replay

import (
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/cacher"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// observeEnd measures the column at the end of the replay: outcomes from
// the clients' view and from a goroutine dump read by the analyzer.
func observeEnd(sc *Scenario, b Backend, clk *testingclock.FakeClock, runs []*clientRun) (*api.Column, error) {
	end := clk.Now()
	dump, rename, err := b.Dump()
	if err != nil {
		return nil, err
	}
	view, err := ClassifyDump(dump, rename, nil)
	if err != nil {
		return nil, err
	}
	col := &api.Column{Name: b.Name(), Counters: b.Counters()}
	if o, ok := b.(*Ours); ok {
		col.Release = o.columnRelease()
	}
	held := map[*worldResource]map[versionKey]int{}
	for _, r := range runs {
		cr := clientResultOf(r)
		if r.h == nil {
			cr.Outcome = api.OutcomeCompleted
			col.Clients = append(col.Clients, cr)
			continue
		}
		last, blockedInWrite := r.h.writeState()
		observeProgress(&cr, r, last, end)
		wg, alive := view.Watchers[r.h.gid]
		observeGoroutines(col, &cr, r, wg, alive, blockedInWrite)
		observeOutcome(&cr, r, wg, alive, held)
		seats := apfSeatSeconds(r, end)
		cr.APFSeatSeconds = r.seatSeconds + seats
		cr.ReturnSeatSeconds = r.returnSeatSeconds
		if r.returns > 0 {
			cr.ReturnSeatSeconds += seats
		}
		col.APFSeatSeconds += cr.APFSeatSeconds
		col.Closures += cr.Closures
		col.Returns += cr.Returns
		col.ReturnSeatSeconds += cr.ReturnSeatSeconds
		col.Clients = append(col.Clients, cr)
	}
	for _, m := range held {
		for _, size := range m {
			col.HeldObjects++
			col.HeldBytes += int64(size)
		}
	}
	return col, nil
}

// clientResultOf is what the client counted, before its handler is looked
// at.
func clientResultOf(r *clientRun) api.ClientResult {
	cr := api.ClientResult{
		Name:              r.name,
		Model:             r.model.String(),
		Scope:             scopeOf(r.spec.Namespace),
		EventsReceived:    r.events,
		BookmarksReceived: r.marks,
		InitialEvents:     r.expected,
		StartSeconds:      r.start.Seconds(),
		Closures:          r.closures,
		Returns:           r.returns,
	}
	if r.spec.Transport != nil {
		tr := *r.spec.Transport
		cr.Transport = &tr
	}
	return cr
}

// observeProgress sets when the client first had its initial events, its
// handler's last progress (last, from its writeState), its longest initial
// gap at end, and the window updates its streams sent.
func observeProgress(cr *api.ClientResult, r *clientRun, last, end time.Time) {
	cr.InitialDoneAtSeconds = secondsPtr(r.caughtUp)
	if r.stoppedAt != nil {
		// What the handler took after the stop was already buffered.
		last = r.progressAtStop
	}
	if !last.IsZero() {
		cr.LastProgressSeconds = ptr(last.Sub(Epoch()).Seconds())
	}
	if gap, ok := r.watchGap(last, end); ok {
		cr.LongestNoProgressSeconds = ptr(max(gap, r.gap).Seconds())
	} else if r.returns > 0 && r.expected > 0 {
		cr.LongestNoProgressSeconds = ptr(r.gap.Seconds())
	}
	cr.WindowUpdates = r.windowUpdates + r.h.st.state().WindowUpdates
}

// watchGap is the longest time the client's current watch went without
// progress in its initial events, by end; last is the handler's last
// progress as observeProgress takes it. False for a watch with no initial
// events, or none taken yet.
func (r *clientRun) watchGap(last, end time.Time) (time.Duration, bool) {
	if r.expected == 0 || last.IsZero() {
		return 0, false
	}
	gap := r.h.longestInitialGap()
	switch {
	case r.initialDone != nil:
	case r.stoppedAt != nil:
		// Stopped in its initial events: until the stop, with the gap
		// running then.
		gap = max(r.gapAtStop, Epoch().Add(*r.stoppedAt).Sub(last))
	default:
		// Still in its initial events at the end: the gap running then
		// counts too.
		gap = max(gap, end.Sub(last))
	}
	return gap, true
}

// observeGoroutines counts the client's watcher goroutine (alive and wg, as
// the dump shows it) and its handler blocked in a write (blockedInWrite,
// from its writeState) into col, and says whether the client was told its
// watch ended.
func observeGoroutines(col *api.Column, cr *api.ClientResult, r *clientRun, wg WatcherGoroutine, alive, blockedInWrite bool) {
	if alive {
		col.WatcherGoroutines++
		if wg.Blocked {
			col.BlockedGoroutines++
		}
	}
	if blockedInWrite && !r.h.done() {
		col.HandlersBlockedInWrite++
		cr.HandlerBlockedInWrite = true
	}
	cr.ClientTold = r.h.clientTold()
}

// observeOutcome sets the client's outcome. A watcher blocked in its initial
// events adds the snapshot it holds to held.
func observeOutcome(cr *api.ClientResult, r *clientRun, wg WatcherGoroutine, alive bool, held map[*worldResource]map[versionKey]int) {
	switch {
	case r.disconnectedAt != nil:
		cr.Outcome = api.OutcomeDisconnected
		cr.DisconnectedAtSeconds = secondsPtr(r.disconnectedAt)
	case r.stoppedAt != nil:
		cr.Outcome = api.OutcomeStopped
		cr.StoppedAtSeconds = secondsPtr(r.stoppedAt)
		cr.StoppedAfterSeconds = ptr((*r.stoppedAt - r.watchStart).Seconds())
	case alive && wg.Blocked:
		cr.Outcome = api.OutcomeBlocked
		if wg.Phase == string(cacher.PhaseInitial) {
			if held[r.resource] == nil {
				held[r.resource] = map[versionKey]int{}
			}
			r.resource.snapshotAt(r.startRV, held[r.resource])
		}
	case r.initialDone != nil:
		cr.Outcome = api.OutcomeCompleted
	default:
		cr.Outcome = api.OutcomeBlocked
	}
}

// apfSeatSeconds is the seat-seconds the client's request held by end.
// APF holds seats until the watch is initialized or the request ends
// (k8s.io/apiserver filters/priority-and-fairness.go signals on the
// handler's return too).
func apfSeatSeconds(r *clientRun, end time.Time) float64 {
	until := end
	if n := r.initializedAt.Load(); n != 0 {
		until = time.Unix(0, n)
	}
	if r.h.done() && r.h.endAt.Before(until) {
		until = r.h.endAt
	}
	started := Epoch().Add(r.watchStart)
	if !until.After(started) {
		return 0
	}
	return float64(r.spec.Seats) * until.Sub(started).Seconds()
}

func scopeOf(ns string) string {
	if ns == "" {
		return "cluster"
	}
	return "namespace " + ns
}

func ptr[T any](v T) *T { return &v }

func secondsPtr(d *time.Duration) *float64 {
	if d == nil {
		return nil
	}
	return ptr(d.Seconds())
}
