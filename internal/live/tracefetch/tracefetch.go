package tracefetch

import (
	"strconv"
	"strings"

	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/bundle"
	"github.com/watch-doctor/watch-doctor/internal/english"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	"github.com/watch-doctor/watch-doctor/internal/watches"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/trace"
)

// TraceInstance takes the execution trace of one instance: a short probe
// that forecasts its rate, then the trace of the interval, stopped at the
// byte budget (budgetStop), streamed into the parser (and
// into raw, when it keeps traces) and stopped early once every suspect has
// progressed. It fills ir.Trace; a failure is its Err (a fallback), and
// so is a trace that may be of another process (traceprocess.go).
func TraceInstance(ctx context.Context, cfg model.Config, c *model.Client, ir *model.InstanceResult, raw model.Target) {
	tr := ir.Trace
	if !GoAtLeast122(ir.GoVersion) {
		tr.Err = &model.TraceUnsupportedError{Instance: c.Inst.Name, GoVersion: ir.GoVersion}
		return
	}
	before := math.NaN()
	if verifiesTraceProcess(cfg, c) {
		before = processStart(ctx, c)
	}
	budget, probe := cfg.Trace.BudgetOrDefault(), cfg.Trace.ProbeOrDefault()
	cfg.Progressf("%s: execution trace: probing the rate with a %s trace", c.Inst.Name, probe)
	ps := TraceStream{Cfg: cfg, C: c, Window: probe, MaxBytes: budget}
	var sum *watches.Trace
	sum, tr.Probe, tr.Err = ps.Run(ctx)
	if tr.Probe.Error != "" {
		return
	}
	tr.Err = nil
	tr.Rate = float64(tr.Probe.Bytes) / probe.Seconds()
	cost := probeCost(sum, tr.Probe.Bytes, probe)
	tr.Estimate = cost.rate()
	remaining := budget - tr.Probe.Bytes
	window := cfg.Interval
	fit := cost.fit(remaining)
	if fit < minTraceWindow && fit < window {
		tr.Err = &model.TraceBudgetError{Instance: c.Inst.Name, Budget: budget, Allowed: fit, Rate: tr.Estimate, Hint: cfg.Words.TraceBudget}
		return
	}
	// The whole interval is asked for whatever the estimate, and the
	// trace stops at the budget (budgetStop): the estimate is a forecast,
	// and over-estimates on big servers, whose generations come further
	// apart than traceGenerationPeriod (bench-live, 100,000 goroutines:
	// one every 1.5 s, 2 s under load), so cutting the request by it
	// wasted the budget.
	tr.Requested = window
	cfg.Progressf("%s: execution trace: %s at an estimated %s/s (the probe: %s/s, %s; budget %s%s)", c.Inst.Name, window, model.Mib1(int64(tr.Estimate)), model.Mib1(int64(tr.Rate)), cost, model.Mib1(budget), forecastText(fit, window))
	ms := TraceStream{Cfg: cfg, C: c, Window: window, MaxBytes: remaining, stop: traceStop(tr, budget, remaining)}
	if tt, ok := raw.(model.TraceTarget); ok {
		ms.store = tt
	}
	tr.Summary, tr.Fetch, tr.Took, tr.Err = ms.run(ctx)
	finishTrace(ctx, cfg, c, ir, before)
}

// traceStop stops the main trace once every suspect progressed, or when
// the budget would not hold another generation, saying which in tr.
func traceStop(tr *model.TraceResult, budget, remaining int64) func(watches.TraceProgress) bool {
	progressed, bs := stopWhenAllProgressed(tr.Suspects), &budgetStop{max: remaining}
	return func(p watches.TraceProgress) bool {
		switch {
		case progressed(p):
			tr.StopWhy = "every initial-phase watcher had progressed"
			return true
		case bs.reached(p):
			tr.BudgetCut = true
			tr.StopWhy = fmt.Sprintf("the trace budget of %s would not hold another generation (%s read, the largest generation %s)", model.Mib1(budget), model.Mib1(tr.Probe.Bytes+p.Bytes), kibOrMib(bs.largest))
			return true
		}
		return false
	}
}

// finishTrace records how the main trace ended, and sets it aside when
// it cannot be a live trace of the interval (traceplausible.go) or the
// process started before it is not the one after it (traceprocess.go).
func finishTrace(ctx context.Context, cfg model.Config, c *model.Client, ir *model.InstanceResult, before float64) {
	tr := ir.Trace
	tr.Interrupted = ctx.Err() != nil
	if tr.Summary != nil && tr.Summary.StoppedEarly && tr.StopWhy != "" && !tr.Interrupted {
		tr.Summary.Why = tr.StopWhy
	}
	if err := implausible(c.Inst.Name, tr, tr.Took); err != nil {
		setAside(tr, err)
	}
	if tr.Summary != nil && verifiesTraceProcess(cfg, c) {
		if err := otherProcess(c.Inst.Name, SampleStart(ir), before, processStart(ctx, c)); err != nil {
			setAside(tr, err)
		}
	}
	tr.Window = windowText(tr, cfg)
	cfg.Progressf("%s: execution trace: %s", c.Inst.Name, tr.Window)
}

// traceGenerationPeriod is how often the runtime starts a generation of
// an execution trace: defaultTraceAdvancePeriod, runtime/trace.go:1122
// (Go 1.26), unchanged since the generational tracer of Go 1.22.
const traceGenerationPeriod = time.Second

// traceCost is what an execution trace of a server costs, estimated from
// a short probe: every generation repeats the status of each goroutine
// that did not run in it, with its stack and string tables, a cost that
// grows with the goroutines, not with the events; the events come on
// top. A 1 s probe holds about two generations (the runtime's advance at
// 1 s and the one ending the trace), so its bytes per second count that
// fixed cost twice: at 42,000 goroutines about 2.8 MB in the probe's
// second against 1.0 to 1.2 MiB/s over a 70 s trace (docs/diagnose-at-scale.md).
type traceCost struct {
	// perGeneration is the bytes of every generation whatever its events:
	// the probe's smallest generation (an upper bound).
	perGeneration int64
	// perSecond is the bytes per second of the events beyond those.
	perSecond float64
}

// probeCost estimates the cost of a trace from the probe sum, of length
// probe, which read bytes. Without two complete generations to compare
// (or without a summary), all of it counts as events: the probe's own
// rate.
func probeCost(sum *watches.Trace, bytes int64, probe time.Duration) traceCost {
	if sum == nil || sum.Generations < 2 || sum.SmallestGeneration <= 0 {
		return traceCost{perSecond: float64(bytes) / probe.Seconds()}
	}
	events := max(0, bytes-int64(sum.Generations)*sum.SmallestGeneration)
	return traceCost{perGeneration: sum.SmallestGeneration, perSecond: float64(events) / probe.Seconds()}
}

// bytes is the estimated size of a trace of window w: a generation per
// period and one more for the advance that ends it, and the events.
func (c traceCost) bytes(w time.Duration) float64 {
	return float64(c.perGeneration)*(w.Seconds()/traceGenerationPeriod.Seconds()+1) + c.perSecond*w.Seconds()
}

// rate is the estimated bytes per second of a long trace.
func (c traceCost) rate() float64 {
	return float64(c.perGeneration)/traceGenerationPeriod.Seconds() + c.perSecond
}

// fit is the longest window, in whole seconds, whose estimated bytes take
// at most nine tenths of budget (the rate of the probe's second varies);
// a day when nothing was measured.
func (c traceCost) fit(budget int64) time.Duration {
	r := c.rate()
	if r <= 0 {
		return 24 * time.Hour
	}
	secs := (0.9*float64(budget) - float64(c.perGeneration)) / r
	if secs <= 0 {
		return 0
	}
	return time.Duration(secs * float64(time.Second)).Truncate(time.Second)
}

// String says what the estimate is made of.
func (c traceCost) String() string {
	if c.perGeneration == 0 {
		return "one generation: its rate"
	}
	return fmt.Sprintf("%s a generation and %s/s of events", kibOrMib(c.perGeneration), kibOrMib(int64(c.perSecond)))
}

// kibOrMib prints bytes as whole KiB under a MiB, else as mib1 does.
func kibOrMib(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return model.Mib1(n)
}

// forecastText says when the estimate expects the budget to end the
// trace before the interval does.
func forecastText(fit, interval time.Duration) string {
	if fit >= interval {
		return ""
	}
	return fmt.Sprintf(", which at that rate ends it after about %s: it stops at the budget", fit)
}

// budgetStop stops a trace at a generation's end when the next
// generation, as large as the largest so far and a quarter more, would
// take it past max bytes: the budget is spent on what the server sends,
// not on the probe's estimate, and the trace read stays whole
// generations rather than a truncated one.
type budgetStop struct {
	max           int64
	last, largest int64
}

func (b *budgetStop) reached(p watches.TraceProgress) bool {
	gen := p.Bytes - b.last
	b.last = p.Bytes
	b.largest = max(b.largest, gen)
	return p.Bytes+b.largest+b.largest/4 > b.max
}

// windowText says over which span the trace proves what it proves.
func windowText(tr *model.TraceResult, cfg model.Config) string {
	s := tr.Summary
	if s == nil {
		return fmt.Sprintf("nothing proven: %v", tr.Err)
	}
	w := s.Window.Round(time.Second)
	out := fmt.Sprintf("the trace covers %s (%s)", w, model.Mib1(s.Bytes))
	switch {
	case s.StoppedEarly && tr.Interrupted:
		out += fmt.Sprintf("; interrupted after %s", w)
	case tr.BudgetCut:
		out += fmt.Sprintf("; the trace budget of %s cut the %s interval%s", model.Mib1(cfg.Trace.BudgetOrDefault()), cfg.Interval, english.Paren(cfg.Words.TraceBudget))
	case s.StoppedEarly:
		out += fmt.Sprintf("; stopped early after %s: every initial-phase watcher had progressed", w)
	case tr.Err != nil:
		out += fmt.Sprintf("; the trace was cut short, so only the %s read count: %v", w, tr.Err)
	}
	return out
}

// TraceStream is one GET of /debug/pprof/trace, parsed as it streams.
type TraceStream struct {
	Cfg      model.Config
	C        *model.Client
	Window   time.Duration
	MaxBytes int64
	// store, when set, keeps the bytes as they are read.
	store model.TraceTarget
	// stop, when set, ends the trace early when it returns true.
	stop func(watches.TraceProgress) bool
}

// Run requests the trace, parses it and returns what it proved, with the
// fetch's record. The request's deadline is the window plus the request
// timeout. Stopping early closes the response, which ends the server's
// wait (net/http/pprof sleep returns when the request's context is done)
// and its trace.
func (ts TraceStream) Run(ctx context.Context) (*watches.Trace, *api.FetchInfo, error) {
	sum, fi, _, err := ts.run(ctx)
	return sum, fi, err
}

// run is Run, and how long the trace took to arrive on the run's clock,
// from the request to the end of its body (0 when it failed before an
// answer).
func (ts TraceStream) run(ctx context.Context) (*watches.Trace, *api.FetchInfo, time.Duration, error) {
	cfg, inst := ts.Cfg, ts.C.Inst
	path := tracePath(ts.Window)
	fi := &api.FetchInfo{Kind: api.FileTrace, Path: path, StartedAt: cfg.Clock.Now().UTC()}
	tc := *ts.C
	tc.Timeout, tc.TimeoutHint = traceDeadline(ts.Cfg, ts.Window, tc.Timeout, tc.TimeoutHint)
	// The trace is bounded by its own budget (ts.maxBytes), which the
	// parser enforces with an error naming the server; the guard of
	// model/bound.go is set to the same bound so it never cuts it first.
	limit := ts.MaxBytes
	if limit <= 0 {
		limit = trace.DefaultMaxBytes
	}
	resp, err := tc.Get(model.WithLimit(ctx, limit+1), path)
	if err != nil {
		if be, ok := isTraceBusy(err); ok {
			err = be
		}
		fi.Error = err.Error()
		return nil, fi, 0, err
	}
	defer resp.Close()
	fi.StartedAt, fi.ServerDate = resp.StartedAt.UTC(), resp.ServerDate
	cr := &model.CountingReader{R: resp.Body}
	var body io.Reader = cr
	var finishStore func() error
	if ts.store != nil {
		body, finishStore = teeToStore(ts.store, inst.Name, cr)
	}
	sum, err := watches.ReadTrace(body, watches.TraceOptions{Source: inst.Name + path, MaxBytes: ts.MaxBytes, Progress: ts.progress(ctx)})
	took := cfg.Clock.Since(resp.StartedAt)
	resp.Close()
	if finishStore != nil {
		serr := finishStore()
		switch {
		case serr != nil && err == nil:
			err = &model.StoreError{Err: serr}
		case serr == nil:
			fi.File = bundle.FileName(api.FileTrace)
		}
	}
	fi.Bytes = cr.N
	fi.Duration = took.Round(time.Millisecond).String()
	if err != nil {
		fi.Error = err.Error()
	}
	return sum, fi, took, err
}

// progress is the parser's Progress callback: a line every 10 generations,
// and false (stop) when ctx ended or ts.stop says every suspect moved.
func (ts TraceStream) progress(ctx context.Context) func(watches.TraceProgress) bool {
	next := 10 * time.Second
	return func(p watches.TraceProgress) bool {
		if ctx.Err() != nil {
			return false
		}
		if p.Window >= next {
			next += 10 * time.Second
			ts.Cfg.Progressf("%s: execution trace: %s of %s read, %s; %d of %d initial-phase watchers progressed", ts.C.Inst.Name, p.Window.Round(time.Second), ts.Window, model.Mib1(p.Bytes), p.Progressed, p.Initial)
		}
		return ts.stop == nil || !ts.stop(p)
	}
}

// teeToStore copies what the parser reads from r into store.StoreTrace,
// run alongside; finish ends the copy and returns the store's error. The
// trace is never held whole: the pipe passes it through as it is read.
func teeToStore(store model.TraceTarget, instance string, r io.Reader) (tee io.Reader, finish func() error) {
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := store.StoreTrace(instance, pr)
		if err == nil {
			err = errStoreReturned
		}
		// Writes after the store returned fail instead of blocking.
		pr.CloseWithError(err)
		done <- err
	}()
	return io.TeeReader(r, pw), func() error {
		pw.Close()
		if err := <-done; !errors.Is(err, errStoreReturned) {
			return err
		}
		return nil
	}
}

var errStoreReturned = errors.New("the trace's store returned")

// stopWhenAllProgressed stops a trace once at least min suspects (the
// initial-phase watchers blocked sending that sample A counted) were seen
// and every one seen has changed state: no watch can then be stuck for
// the window, and tracing on would only cost the server.
func stopWhenAllProgressed(min int) func(watches.TraceProgress) bool {
	return func(p watches.TraceProgress) bool {
		return p.Initial > 0 && p.Initial >= min && p.Progressed == p.Initial
	}
}

// minTraceWindow is the shortest trace worth taking after the probe.
const minTraceWindow = 2 * time.Second

// GoAtLeast122 reports whether a goVersion ("go1.26.8", "go1.22rc1",
// "devel go1.27-abc") is Go 1.22 or later; unknown versions pass (the
// trace's own header is checked by the parser).
func GoAtLeast122(v string) bool {
	i := strings.Index(v, "go1.")
	if i < 0 {
		return true
	}
	rest := v[i+len("go1."):]
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	minor, err := strconv.Atoi(rest[:j])
	return err != nil || minor >= 22
}

// isTraceBusy reports whether err is the runtime's refusal of a second
// trace (HTTP 500 "Could not enable tracing: ...already enabled").
func isTraceBusy(err error) (*model.TraceBusyError, bool) {
	var he *model.HTTPError
	if errors.As(err, &he) && he.Status == 500 && strings.Contains(he.Message, "already enabled") {
		return &model.TraceBusyError{Instance: he.Instance, Message: he.Message}, true
	}
	return nil, false
}

// traceSeconds is the query value of a window: whole milliseconds.
func traceSeconds(d time.Duration) string {
	return strconv.FormatFloat(d.Round(time.Millisecond).Seconds(), 'f', -1, 64)
}

// tracePath is the trace request of a window.
func tracePath(d time.Duration) string { return "/debug/pprof/trace?seconds=" + traceSeconds(d) }
