package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/cacher"
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

// runColumn replays sc on b in virtual time, one tick at a time, and returns
// b's column and, with timeline, its series (timeline.go).
func runColumn(ctx context.Context, sc *Scenario, b Backend, timeline bool) (_ *api.Column, _ *api.TimelineSeries, err error) {
	clk := testingclock.NewFakeClock(Epoch())
	w := newWorld(sc)
	if o, ok := b.(*Ours); ok {
		o.modelRelease(sc.ModelRelease())
	}
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

// connect starts the clients due at t, those that relist and are due
// back (relist.go), and disconnects those whose model leaves at t.
func (c *columnRun) connect(t time.Duration) error {
	acted := false
	for _, r := range c.runs {
		if r.returnDue(t) && t < c.sc.Duration.Duration {
			r.finishWatch(t)
		}
		if r.h == nil && r.watchStart <= t && t < c.sc.Duration.Duration {
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
// whose watcher the backend stopped (a closure), and when those that relist
// and met the end of their watch come back.
func (c *columnRun) observe(t time.Duration) {
	for _, r := range c.runs {
		if r.h == nil {
			continue
		}
		if r.stoppedAt == nil && r.disconnectedAt == nil && r.h.end != endWatchError {
			if r.h.done() && r.h.end == endTimeout {
				at := t
				r.disconnectedAt = &at
			} else if !c.b.Alive(r.h.w) {
				at := t
				r.stoppedAt = &at
				r.closures++
				r.noteStop()
			}
		}
		r.noteEnd(t)
	}
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
