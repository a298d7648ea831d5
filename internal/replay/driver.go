package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/cacher"
	"github.com/watch-doctor/watch-doctor/internal/english"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// Epoch is the virtual time every replay starts at.
func Epoch() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }

// maxReadRounds bounds the rounds of one read pass (readAll; each round
// lets clients read what arrived since the last and the server write
// more).
const maxReadRounds = 1 << 20

// maxBackpressureRetries bounds how often one change is retried after
// ErrBackpressure; each retry follows a Settle, after which the dispatcher
// has taken at least one queued change, so the queue (100) drains long
// before.
const maxBackpressureRetries = 1000

// Options tunes a replay.
type Options struct {
	// Timeline records blocked watcher goroutines per tick.
	Timeline bool
	// Progress, when set, gets one line per column.
	Progress io.Writer
}

// DefaultBackends are the four columns: k8s.io/apiserver's cacher is
// passed in by the caller (internal/replay/upstream), ours are built here.
func DefaultBackends(sc *Scenario, upstream Backend) []Backend {
	var out []Backend
	if upstream != nil {
		out = append(out, upstream)
	}
	return append(out, NewOurs(api.ColumnUnpatched, 0), NewOurs(api.ColumnPR141899, sc.StallTimeout.Duration), NewOursComplete(sc.StallTimeout.Duration))
}

// Run replays sc against each backend in turn, with the same clients, the
// same changes and the same transport model, and compares them.
func Run(ctx context.Context, sc *Scenario, backends []Backend, opts Options) (*api.Replay, error) {
	res := &api.Replay{
		Kind:                api.KindReplay,
		APIVersion:          api.GroupVersion,
		Scenario:            sc.Name,
		Description:         sc.Description,
		DurationSeconds:     sc.Duration.Seconds(),
		TickSeconds:         sc.Tick.Seconds(),
		StallTimeoutSeconds: sc.StallTimeout.Seconds(),
		Transport:           sc.Transport,
	}
	if opts.Timeline {
		res.Timeline = &api.Timeline{}
	}
	for _, b := range backends {
		start := time.Now()
		col, series, err := runColumn(ctx, sc, b, opts.Timeline)
		if err != nil {
			return nil, fmt.Errorf("replaying %q in the %s column: %w", sc.Name, b.Name(), err)
		}
		res.Columns = append(res.Columns, *col)
		if res.Timeline != nil {
			if len(res.Timeline.Seconds) == 0 {
				for i := range series.Blocked {
					res.Timeline.Seconds = append(res.Timeline.Seconds, (time.Duration(i) * sc.Tick.Duration).Seconds())
				}
			}
			res.Timeline.Series = append(res.Timeline.Series, *series)
		}
		if opts.Progress != nil {
			fmt.Fprintf(opts.Progress, "replay %s: %s column done in %v\n", sc.Name, b.Name(), time.Since(start).Round(time.Millisecond))
		}
	}
	res.Verdict = verdictOf(res)
	return res, nil
}

// clientRun is one client during one column's replay. Owned by the driver.
type clientRun struct {
	spec     *Client
	name     string
	model    Model
	start    time.Duration
	resource *worldResource

	h        *handler
	tokens   float64
	taken    int64
	events   int64
	marks    int64
	expected int
	wantEnd  bool
	startRV  uint64

	initialDone    *time.Duration
	stoppedAt      *time.Duration
	progressAtStop time.Time
	// gapAtStop is the handler's longest initial gap when the stop was
	// seen; stopSeen says progressAtStop and gapAtStop were taken when
	// the clock stepped, before the next tick's reads.
	gapAtStop      time.Duration
	stopSeen       bool
	disconnectedAt *time.Duration
	initializedAt  atomic.Int64 // clock UnixNano; 0 until initialized
}

func expandClients(sc *Scenario, w *world) []*clientRun {
	var out []*clientRun
	for i := range sc.Clients {
		c := &sc.Clients[i]
		m, _ := ParseModel(c.Model)
		for k := 0; k < c.Count; k++ {
			name := c.Name
			if c.Count > 1 {
				name = fmt.Sprintf("%s-%d", c.Name, k+1)
			}
			out = append(out, &clientRun{
				spec:     c,
				name:     name,
				model:    m,
				start:    c.StartAt.Duration + time.Duration(k)*c.Every.Duration,
				resource: w.byName[c.Resource],
			})
		}
	}
	return out
}

// runColumn replays sc on b in virtual time, one tick at a time, and returns
// b's column and, with timeline, its series (timeline.go).
func runColumn(ctx context.Context, sc *Scenario, b Backend, timeline bool) (_ *api.Column, _ *api.TimelineSeries, err error) {
	clk := testingclock.NewFakeClock(Epoch())
	w := newWorld(sc)
	if err := b.Start(w.initial(), clk); err != nil {
		return nil, nil, err
	}
	c := &columnRun{ctx: ctx, sc: sc, b: b, clk: clk, w: w, runs: expandClients(sc, w), tick: sc.Tick.Duration}
	defer func() {
		if terr := teardown(ctx, b, c.runs); terr != nil && err == nil {
			err = terr
		}
	}()
	if err := c.settle(); err != nil {
		return nil, nil, err
	}
	steps := int(sc.Duration.Duration / c.tick)
	var rec *timelineRecorder
	if timeline {
		rec = newTimelineRecorder(b.Name(), c.runs)
	}
	for k := 0; k <= steps; k++ {
		t := time.Duration(k) * c.tick
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		if err := c.connect(t); err != nil {
			return nil, nil, err
		}
		c.refillPaced()
		if err := c.readAll(t); err != nil {
			return nil, nil, err
		}
		if k < steps {
			if err := c.applyChanges(t); err != nil {
				return nil, nil, err
			}
		}
		c.observe(t)
		if rec != nil {
			rec.record(b, t, c.runs)
		}
		if k == steps {
			break
		}
		if err := c.advance(t); err != nil {
			return nil, nil, err
		}
	}
	col, err := observeEnd(sc, b, clk, c.runs)
	if rec == nil {
		return col, nil, err
	}
	return col, &rec.s, err
}

// columnRun is one column's replay in progress: the steps of the loop in
// the package comment, one method each. Used by one goroutine only.
type columnRun struct {
	ctx  context.Context
	sc   *Scenario
	b    Backend
	clk  *testingclock.FakeClock
	w    *world
	runs []*clientRun
	tick time.Duration
}

// settle waits until every client's handler is quiescent (see
// Backend.Settle).
//
// A failure names the client whose handler kept it from settling, if any:
// the backend sees only its own goroutines.
func (c *columnRun) settle() error {
	busy := ""
	err := c.b.Settle(c.ctx, func() bool {
		now := c.clk.Now()
		for _, r := range c.runs {
			if r.h != nil && !r.h.quiescent(now, c.b.Alive) {
				busy = r.name
				return false
			}
		}
		busy = ""
		return true
	})
	if err != nil && busy != "" && c.ctx.Err() == nil {
		return fmt.Errorf("%w; the request handler of client %q never became quiescent", err, busy)
	}
	return err
}

// connect starts the clients due at t and disconnects those whose model
// leaves at t.
func (c *columnRun) connect(t time.Duration) error {
	acted := false
	for _, r := range c.runs {
		if r.h == nil && r.start <= t && t < c.sc.Duration.Duration {
			if err := startClient(c.sc, c.b, c.clk, r); err != nil {
				return err
			}
			acted = true
			if err := c.settle(); err != nil {
				return err
			}
		}
		if r.h != nil && r.model.Kind == ModelDisconnectsAfter && r.disconnectedAt == nil && r.stoppedAt == nil && t >= r.start+r.model.After {
			at := t
			r.disconnectedAt = &at
			r.h.cancel()
			acted = true
		}
	}
	if acted {
		return c.settle()
	}
	return nil
}

// refillPaced gives paced clients their tick's allowance of reads.
func (c *columnRun) refillPaced() {
	for _, r := range c.runs {
		if r.h != nil && r.model.Kind == ModelPaced {
			per := r.model.Rate * c.tick.Seconds()
			r.tokens = math.Min(r.tokens+per, per+1)
		}
	}
}

// readAll lets every client read what its model allows, in rounds: each
// round's reads return credit, with which the handlers write more, until a
// round returns none.
func (c *columnRun) readAll(t time.Duration) error {
	for round := 0; ; round++ {
		if round > maxReadRounds {
			return fmt.Errorf("reads at %v did not converge", t)
		}
		progressed := false
		for _, r := range c.runs {
			if r.h != nil && r.read(t) {
				progressed = true
			}
		}
		if !progressed {
			return nil
		}
		if err := c.settle(); err != nil {
			return err
		}
	}
}

// applyChanges applies the tick's changes one at a time. Whenever a client
// that would read has its handler blocked on flow-control credit, the
// clients read before the next change; then they read once more. So a
// client that keeps up never finds its watcher's channels filled by changes
// that came between two of its reads, as when the changes are spread over
// the tick (its handler, while it has credit, drains them as they come).
func (c *columnRun) applyChanges(t time.Duration) error {
	changes := c.w.changesAt(t, c.tick)
	for _, ch := range changes {
		if err := apply(c.b, ch, c.settle); err != nil {
			return err
		}
		if err := c.settle(); err != nil {
			return err
		}
		if readerStarved(c.runs) {
			if err := c.readAll(t); err != nil {
				return err
			}
		}
	}
	if len(changes) > 0 {
		return c.readAll(t)
	}
	return nil
}

// observe records, at t, the clients whose request timed out and those
// whose watcher the backend stopped.
func (c *columnRun) observe(t time.Duration) {
	for _, r := range c.runs {
		if r.h == nil || r.stoppedAt != nil || r.disconnectedAt != nil || r.h.end == endWatchError {
			continue
		}
		if r.h.done() && r.h.end == endTimeout {
			at := t
			r.disconnectedAt = &at
		} else if !c.b.Alive(r.h.w) {
			at := t
			r.stoppedAt = &at
			r.noteStop()
		}
	}
}

// noteStop records the handler's progress when its watcher's stop is first
// seen: what it takes afterwards was already buffered.
func (r *clientRun) noteStop() {
	if r.stopSeen {
		return
	}
	r.stopSeen = true
	r.progressAtStop, _ = r.h.writeState()
	r.gapAtStop = r.h.longestInitialGap()
}

// noteStops records the progress of the watchers a clock step stopped (the
// stall timeout fires there), before the next tick's reads let their
// handlers take what was buffered.
func (c *columnRun) noteStops() {
	for _, r := range c.runs {
		if r.h == nil || r.stoppedAt != nil || r.disconnectedAt != nil || r.h.done() || r.h.end == endWatchError {
			continue
		}
		if !c.b.Alive(r.h.w) {
			r.noteStop()
		}
	}
}

// advance steps the fake clock to the next tick and settles.
func (c *columnRun) advance(t time.Duration) error {
	c.clk.SetTime(Epoch().Add(t + c.tick))
	if err := c.settle(); err != nil {
		return err
	}
	c.noteStops()
	return nil
}

// apply applies one change, settling and retrying while the backend's
// dispatcher queue is full. Any other error (cacher.ErrStopped among them)
// is final.
func apply(b Backend, ch change, settle func() error) error {
	for retry := 0; ; retry++ {
		err := b.Apply(ch.resource, ch.typ, ch.obj)
		switch {
		case err == nil:
			return nil
		case !errors.Is(err, cacher.ErrBackpressure):
			return fmt.Errorf("applying %s of %s: %w", ch.typ, ch.obj.Key(), err)
		case retry == maxBackpressureRetries:
			return fmt.Errorf("applying %s of %s: the dispatcher queue stayed full after %d settles (this is a bug in the replay)", ch.typ, ch.obj.Key(), retry)
		}
		if err := settle(); err != nil {
			return err
		}
	}
}

func startClient(sc *Scenario, b Backend, clk *testingclock.FakeClock, r *clientRun) error {
	rv, sie := r.spec.request()
	tr := r.spec.transport(sc)
	ctx, cancel := context.WithCancel(context.Background())
	rc := &requestContext{Context: ctx}
	if r.spec.Timeout.Duration > 0 {
		rc.deadline = clk.Now().Add(r.spec.Timeout.Duration)
	}
	h := &handler{
		backend:    b,
		clock:      clk,
		ctx:        rc,
		cancel:     cancel,
		timeout:    r.spec.Timeout.Duration,
		st:         newStream(tr),
		bookmarkSz: int64(tr.BookmarkBytes),
		exited:     make(chan struct{}),
		reset:      make(chan struct{}),
		req: WatchRequest{
			Resource:            r.spec.Resource,
			Namespace:           r.spec.Namespace,
			ResourceVersion:     rv,
			SendInitialEvents:   sie,
			AllowWatchBookmarks: *r.spec.Bookmarks,
		},
	}
	h.req.Received = &h.received
	h.req.OnInitialized = func() { r.initializedAt.CompareAndSwap(0, clk.Now().UnixNano()) }
	h.req.OnStall = h.resetStream
	if sie == nil || *sie {
		r.expected = r.resource.inScope(r.spec.Namespace)
	}
	r.wantEnd = sie != nil && *sie && *r.spec.Bookmarks
	r.startRV = r.resource.rv
	if r.expected == 0 && !r.wantEnd {
		at := clk.Now().Sub(Epoch())
		r.initialDone = &at
	}
	r.h = h
	started := make(chan error, 1)
	go h.serve(started)
	if err := <-started; err != nil {
		return fmt.Errorf("client %q could not watch: %w", r.name, err)
	}
	return nil
}

// readerStarved reports whether some client would read now while its
// handler waits for flow-control credit: only such a client can see its
// watcher's channels fill up if changes keep coming before it reads.
// Reading after every change gives the same results; this check only
// spares a read pass over every client after every change (issue-137631's
// hour has 1000 clients). Valid after a settle.
func readerStarved(runs []*clientRun) bool {
	for _, r := range runs {
		if r.h == nil || r.h.done() || r.allowance() == 0 {
			continue
		}
		if _, blocked := r.h.writeState(); blocked && r.h.st.readable() > 0 {
			return true
		}
	}
	return false
}

// allowance is how many events the client's model lets it read now.
func (r *clientRun) allowance() int {
	switch r.model.Kind {
	case ModelPaced:
		return int(r.tokens)
	case ModelStopsAfter:
		limit := int64(r.model.Events)
		if r.model.AfterInitialEvents {
			limit = int64(r.expected)
			if r.wantEnd {
				limit++
			}
		}
		return int(max(limit-r.taken, 0))
	case ModelDisconnectsAfter:
		if r.disconnectedAt != nil {
			return 0
		}
	}
	return math.MaxInt32
}

// read lets the client's application read what its model allows now and
// reports whether that returned credit to the server (which may then
// write more). Once the handler returned, the client reads what is left
// after a closed result channel, and on HTTP/1.1 the bytes in flight
// whatever the server's reason (a timeout, a failed write); on HTTP/2 a
// reset or the end at a timeout discards them.
func (r *clientRun) read(t time.Duration) bool {
	if r.h.done() && r.h.end != endResultClosed && !(r.h.st.http1 && r.h.serverEnded()) {
		return false
	}
	st := r.h.st
	st.mu.Lock()
	before := st.windowUpdates
	st.mu.Unlock()
	got := st.consume(r.allowance())
	for _, e := range got {
		r.taken++
		if r.model.Kind == ModelPaced {
			r.tokens--
		}
		if e.bookmark {
			r.marks++
		} else {
			r.events++
		}
		if r.initialDone == nil && ((r.wantEnd && e.end) || (!r.wantEnd && r.events >= int64(r.expected))) {
			at := t
			r.initialDone = &at
			r.h.initialOver.Store(true)
		}
	}
	st.mu.Lock()
	after := st.windowUpdates
	st.mu.Unlock()
	return after != before
}

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
	held := map[*worldResource]map[versionKey]int{}
	for _, r := range runs {
		cr := api.ClientResult{
			Name:              r.name,
			Model:             r.model.String(),
			Scope:             scopeOf(r.spec.Namespace),
			EventsReceived:    r.events,
			BookmarksReceived: r.marks,
			InitialEvents:     r.expected,
			StartSeconds:      r.start.Seconds(),
		}
		if r.spec.Transport != nil {
			tr := *r.spec.Transport
			cr.Transport = &tr
		}
		if r.h == nil {
			cr.Outcome = api.OutcomeCompleted
			col.Clients = append(col.Clients, cr)
			continue
		}
		cr.InitialDoneAtSeconds = secondsPtr(r.initialDone)
		last, blockedInWrite := r.h.writeState()
		if r.stoppedAt != nil {
			// What the handler took after the stop was already buffered.
			last = r.progressAtStop
		}
		if !last.IsZero() {
			cr.LastProgressSeconds = ptr(last.Sub(Epoch()).Seconds())
		}
		if r.expected > 0 && !last.IsZero() {
			gap := r.h.longestInitialGap()
			switch {
			case r.initialDone != nil:
			case r.stoppedAt != nil:
				// Stopped in its initial events: until the stop, with the
				// gap running then.
				gap = max(r.gapAtStop, Epoch().Add(*r.stoppedAt).Sub(last))
			default:
				// Still in its initial events at the end: the gap
				// running then counts too.
				gap = max(gap, end.Sub(last))
			}
			cr.LongestNoProgressSeconds = ptr(gap.Seconds())
		}
		st := r.h.st.state()
		cr.WindowUpdates = st.WindowUpdates
		wg, alive := view.Watchers[r.h.gid]
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
		switch {
		case r.disconnectedAt != nil:
			cr.Outcome = api.OutcomeDisconnected
			cr.DisconnectedAtSeconds = secondsPtr(r.disconnectedAt)
		case r.stoppedAt != nil:
			cr.Outcome = api.OutcomeStopped
			cr.StoppedAtSeconds = secondsPtr(r.stoppedAt)
			cr.StoppedAfterSeconds = ptr((*r.stoppedAt - r.start).Seconds())
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
		// APF: seats are held until the watch is initialized or the request
		// ends (k8s.io/apiserver filters/priority-and-fairness.go signals on
		// the handler's return too).
		until := end
		if n := r.initializedAt.Load(); n != 0 {
			until = time.Unix(0, n)
		}
		if r.h.done() && r.h.endAt.Before(until) {
			until = r.h.endAt
		}
		started := Epoch().Add(r.start)
		if until.After(started) {
			cr.APFSeatSeconds = float64(r.spec.Seats) * until.Sub(started).Seconds()
		}
		col.APFSeatSeconds += cr.APFSeatSeconds
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

// teardown ends every request and stops the backend.
func teardown(ctx context.Context, b Backend, runs []*clientRun) error {
	for _, r := range runs {
		if r.h != nil {
			r.h.cancel()
		}
	}
	deadline := time.Now().Add(settleTimeout)
	for _, r := range runs {
		if r.h == nil {
			continue
		}
		select {
		case <-r.h.exited:
		case <-time.After(time.Until(deadline)):
			b.Stop()
			return fmt.Errorf("handler of %q did not return after its client disconnected", r.name)
		}
	}
	b.Stop()
	return nil
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

// verdictOf compares the columns: upstream against unpatched (fidelity),
// and unpatched against pr141899 and complete (what each fix changes).
func verdictOf(res *api.Replay) api.Verdict {
	var v api.Verdict
	byName := map[string]*api.Column{}
	for i := range res.Columns {
		byName[res.Columns[i].Name] = &res.Columns[i]
	}
	up, un := byName[api.ColumnUpstream], byName[api.ColumnUnpatched]
	pr, co := byName[api.ColumnPR141899], byName[api.ColumnComplete]
	if up != nil && un != nil {
		if diffs := CompareColumns(up, un); len(diffs) == 0 {
			v.Fidelity = "identical"
		} else {
			v.Fidelity = "different"
			v.Notes = append(v.Notes, diffs...)
		}
	}
	// The stall timeout stops the same watchers in both fixed columns;
	// compare against whichever is there.
	fixed := pr
	if fixed == nil {
		fixed = co
	}
	if un == nil || fixed == nil {
		v.Summary = "nothing to compare: the unpatched column and a fixed one (pr141899 or complete) are needed"
		if v.Fidelity == "different" {
			v.Summary += "; WARNING: our unpatched cacher disagrees with upstream (see notes)"
		}
		return v
	}
	for i, c := range un.Clients {
		p := fixed.Clients[i]
		switch {
		case c.Outcome == api.OutcomeBlocked && p.Outcome == api.OutcomeStopped:
			v.Freed = append(v.Freed, c.Name)
		case c.Outcome == api.OutcomeCompleted && p.Outcome == api.OutcomeStopped:
			v.Cut = append(v.Cut, c.Name)
		case c.Outcome != p.Outcome:
			v.Notes = append(v.Notes, fmt.Sprintf("%s: %s unpatched, %s %s", c.Name, c.Outcome, p.Outcome, fixed.Name))
		}
		if p.Outcome == api.OutcomeStopped {
			if pr != nil && pr.Clients[i].HandlerBlockedInWrite {
				v.HeldByPR141899 = append(v.HeldByPR141899, c.Name)
			}
			if co != nil && co.Clients[i].ClientTold {
				v.ToldByComplete = append(v.ToldByComplete, c.Name)
			}
		}
	}
	sort.Strings(v.Notes)
	var parts []string
	if len(v.Freed) > 0 {
		parts = append(parts, fmt.Sprintf("the stall timeout stops the watcher of %d stuck watch%s (%d blocked goroutine%s left, %d unpatched)",
			len(v.Freed), english.Plural(len(v.Freed), "", "es"), fixed.BlockedGoroutines, english.Plural(fixed.BlockedGoroutines, "", "s"), un.BlockedGoroutines))
		if pr != nil {
			parts = append(parts, fmt.Sprintf("pr141899 leaves %d handler%s blocked writing and %s APF seat-seconds held (%s unpatched), telling %s",
				len(v.HeldByPR141899), english.Plural(len(v.HeldByPR141899), "", "s"), english.Number(pr.APFSeatSeconds), english.Number(un.APFSeatSeconds),
				toldText(pr, v.Freed, un)))
		}
		if co != nil {
			freed := len(v.Freed) - countNamed(co, v.Freed, un, func(c api.ClientResult) bool { return c.HandlerBlockedInWrite })
			parts = append(parts, fmt.Sprintf("complete frees %d handler%s (%s APF seat-seconds) and tells %d client%s",
				freed, english.Plural(freed, "", "s"), english.Number(co.APFSeatSeconds),
				len(v.ToldByComplete), english.Plural(len(v.ToldByComplete), "", "s")))
		}
	}
	if len(v.Cut) > 0 {
		parts = append(parts, fmt.Sprintf("the stall timeout CUTS %d client%s that complete%s without it: %s", len(v.Cut), english.Plural(len(v.Cut), "", "s"), english.Plural(len(v.Cut), "s", ""), strings.Join(v.Cut, ", ")))
	} else {
		parts = append(parts, "the stall timeout cuts no client that completes without it")
	}
	if len(v.Freed) == 0 && un.BlockedGoroutines == 0 {
		parts = append([]string{"nothing is stuck unpatched"}, parts...)
	}
	v.Summary = strings.Join(parts, "; ")
	if v.Fidelity == "different" {
		v.Summary += "; WARNING: our unpatched cacher disagrees with upstream (see notes)"
	}
	return v
}

// countNamed counts the clients of col named in names for which pred holds
// (ref is the column names are taken from; clients are in the same order in
// every column).
func countNamed(col *api.Column, names []string, ref *api.Column, pred func(api.ClientResult) bool) int {
	n := 0
	for i, c := range ref.Clients {
		if slices.Contains(names, c.Name) && pred(col.Clients[i]) {
			n++
		}
	}
	return n
}

// toldText says how many of the named clients col told.
func toldText(col *api.Column, names []string, ref *api.Column) string {
	n := countNamed(col, names, ref, func(c api.ClientResult) bool { return c.ClientTold })
	if n == 0 {
		return "no client"
	}
	return fmt.Sprintf("%d client%s", n, english.Plural(n, "", "s"))
}
