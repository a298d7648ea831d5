package exporter

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/bundle"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	"github.com/watch-doctor/watch-doctor/internal/watches"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/metrics"
)

// DefaultTraceEvery is the least time between two traces of one instance
// when TraceConfig.Every is 0.
const DefaultTraceEvery = 10 * time.Minute

// traceProbe is the rate probe live takes before the window (its
// default): part of what a traced look may add to the window.
const traceProbe = time.Second

// TraceConfig lets serve trace (opt-in). After a look leaves watches of a
// pinned instance undecided (initializing past the stall bound, which the
// cheap look cannot judge), and no trace of that instance started within
// Every, the instance is looked at again with an execution trace between
// two samples, as diagnose --evidence trace does: sample A (the cheap
// look's fetches), a 1 s rate probe, the trace of Window (stopped at
// Budget), sample B. Never a debug=2 dump. The trace is streamed into the
// parser of internal/live and never held whole.
type TraceConfig struct {
	// Window is the trace's length; 0 never traces.
	Window time.Duration
	// Budget bounds the bytes of one instance's trace, probe included;
	// 0 means model.DefaultTraceBudget.
	Budget int64
	// Every is the least time between the starts of two traces of one
	// instance, failed ones included; 0 means DefaultTraceEvery.
	Every time.Duration
}

func (t TraceConfig) validate() error {
	if t.Window < 0 || t.Budget < 0 || t.Every < 0 {
		return fmt.Errorf("invalid trace window %s, budget %d or spacing %s: must not be negative", t.Window, t.Budget, t.Every)
	}
	if t.Window > 0 && t.Every > 0 && t.Every < t.Window {
		return fmt.Errorf("invalid trace spacing %s: must be at least the trace window %s", t.Every, t.Window)
	}
	return nil
}

// traceDeadline bounds a traced look: the window, the probe and two
// request timeouts (one per sample). Past it the look is cut, a
// KindTraceTimeout error, and the loop goes on.
func (e *Exporter) traceDeadline() time.Duration {
	return e.cfg.Trace.Window + traceProbe + 2*e.cfg.Live.RequestTimeout
}

// decision is what a trace decided of an instance: the keys of the
// watches it found initializing past the stall bound, and how many of
// them were stuck. A look carries it on while the same watches, and no
// others, are past the bound (carry); the first change voids it.
type decision struct {
	keys  []string
	stuck int
}

// traceStat is what the traces of an instance cost and proved.
type traceStat struct {
	// window is the span the last trace proved, in seconds.
	window float64
	// bytes are the bytes every trace returned, summed.
	bytes float64
	// pause is the server's non-GC pause during the last traced look;
	// nil when unknown.
	pause *float64
}

// requestKey names an APF request across samples: user, path and start.
func requestKey(rq apf.Request) string {
	return userOf(rq) + "\x00" + rq.Path + "\x00" + strconv.FormatInt(rq.StartTime.UnixNano(), 10)
}

// undecidedKeys are the keys of the watches of s past the stall bound,
// sorted.
func undecidedKeys(s watches.Sample) []string {
	var keys []string
	for _, rq := range initializing(s.Requests) {
		if pastStallBound(rq, s.CapturedAt) {
			keys = append(keys, requestKey(rq))
		}
	}
	slices.Sort(keys)
	return keys
}

// carry replaces the states of snap by the instance's last trace
// decision while its watches past the stall bound are exactly the ones
// the trace judged: the stuck ones are among them, the rest progress.
// A carried decision is checked by a new trace once Every has passed.
func (e *Exporter) carry(snap *instanceSnap, s watches.Sample) {
	e.mu.Lock()
	d, ok := e.decisions[snap.name]
	e.mu.Unlock()
	if !ok || snap.states == nil || snap.states[StateUndecided] == 0 || !slices.Equal(d.keys, snap.undecided) {
		return
	}
	n := len(initializing(s.Requests))
	snap.states = map[string]int{StateStuck: d.stuck, StateProgressing: max(0, n-d.stuck), StateUndecided: 0}
	snap.carried = true
}

// due are the instances of res to trace now: pinned, with watches left
// undecided or decided by a trace (carried: the decision is checked again
// every Every), and not traced within Every.
func (e *Exporter) due(res lookResult) []string {
	if e.cfg.Trace.Window <= 0 {
		return nil
	}
	now := e.cfg.Clock.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, s := range res.instances {
		last, traced := e.lastTrace[s.name]
		if (s.states[StateUndecided] == 0 && !s.carried) || (traced && now.Sub(last) < e.cfg.Trace.Every) {
			continue
		}
		if !s.pinned {
			// Through the kubeconfig host a load balancer may send the
			// samples and the trace to different processes, and the
			// trace would judge watchers against another's APF rows.
			if !e.unpinnedSaid[s.name] {
				e.unpinnedSaid[s.name] = true
				e.cfg.Logger.Warn("not tracing: the instance is read through the kubeconfig host, not at its own address"+paren(e.cfg.Live.Words.APIServers), "apiserver", s.name)
			}
			continue
		}
		e.lastTrace[s.name] = now
		out = append(out, s.name)
	}
	return out
}

// traced is one traced look of one instance.
type traced struct {
	name   string
	states map[string]int
	// decided is set when the trace decided every watch past the bound.
	decided *decision
	stat    traceStat
	errs    []error
}

// traceLook looks at the instances again with a trace between two
// samples (TraceConfig), within traceDeadline.
func (e *Exporter) traceLook(ctx context.Context, names []string) []traced {
	cfg := e.cfg.Live
	cfg.Samples, cfg.Interval, cfg.Force, cfg.Progress = 2, e.cfg.Trace.Window, false, nil
	// /version too: a Go older than 1.22 writes traces the parser
	// cannot read.
	cfg.Only = append(slices.Clone(lookKinds), api.FileVersion, api.FileTrace)
	cfg.Trace = model.TraceConfig{Evidence: model.EvidenceTrace, Budget: e.cfg.Trace.Budget, Probe: traceProbe}
	cfg.APIServers = names
	cfg.Words.Interval = ""
	tctx, cancel := context.WithTimeout(ctx, e.traceDeadline())
	defer cancel()
	eres, err := diagnose(tctx, cfg)
	if err != nil {
		out := make([]traced, len(names))
		for i, n := range names {
			out[i] = traced{name: n, errs: []error{&traceError{kind: traceKind(tctx, err, false), err: err}}}
		}
		return out
	}
	res, loaded, report := eres.Run, eres.Loaded, eres.Report
	var out []traced
	for _, ir := range res.Instances {
		t := traced{name: Label(ir.Instance.Name), errs: slices.Clone(ir.Errors)}
		if tr := ir.Trace; tr != nil {
			for _, f := range []*api.FetchInfo{tr.Probe, tr.Fetch} {
				if f != nil {
					t.stat.bytes += float64(f.Bytes)
				}
			}
			if tr.Summary != nil {
				t.stat.window = tr.Summary.Window.Seconds()
			}
			if tr.Err != nil {
				t.errs = append(t.errs, &traceError{kind: traceKind(tctx, tr.Err, tr.Summary != nil), err: tr.Err})
			}
		}
		for _, s := range eres.Processes {
			if s.Instance.Name != ir.Instance.Name || len(s.Input.Samples) == 0 {
				continue
			}
			b := s.Input.Samples[len(s.Input.Samples)-1]
			t.states = decided(report, s.Name, b, b.Requests != nil && b.Requests.HasDetails)
			if s.Input.Trace != nil && t.states != nil && t.states[StateUndecided] == 0 {
				t.decided = &decision{keys: undecidedKeys(b), stuck: t.states[StateStuck]}
			}
		}
		t.stat.pause = tracePause(loaded.Captures, ir.Instance.Name)
		out = append(out, t)
	}
	return out
}

// traceError is a trace's failure, of one of the trace kinds.
type traceError struct {
	kind string
	err  error
}

func (e *traceError) Error() string { return "execution trace: " + e.err.Error() }
func (e *traceError) Unwrap() error { return e.err }

// traceKind sorts a trace's failure; partial is set when part of the
// trace was read (and counts).
func traceKind(ctx context.Context, err error, partial bool) string {
	var be *model.TraceBusyError
	var ue *model.TraceUnsupportedError
	var ge *model.TraceBudgetError
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return KindTraceTimeout
	case errors.As(err, &be):
		return KindTraceBusy
	case errors.As(err, &ue):
		return KindTraceUnsupported
	case errors.As(err, &ge):
		return KindTraceBudget
	case partial:
		return KindTraceCut
	}
	switch errorKind(err) {
	case KindForbidden:
		return KindTraceForbidden
	case KindProfilingDisabled:
		return KindTraceNoProfiling
	}
	return KindTraceFailed
}

// tracePause is how the server's non-GC pauses grew from sample A to
// sample B of a traced look: the trace's cost, at most; nil when unknown.
func tracePause(captures []*bundle.Capture, instance string) *float64 {
	var samples []*metrics.Sample
	for _, c := range captures {
		if c.Instance == instance {
			samples = append(samples, c.MetricsSample)
		}
	}
	if len(samples) < 2 {
		return nil
	}
	d, err := pauseDelta(samples[0], samples[len(samples)-1])
	if err != nil || d == nil {
		return nil
	}
	return &d.Sum
}

// traceIfDue traces the instances due (due) and publishes what the
// traces decided and cost.
func (e *Exporter) traceIfDue(ctx context.Context, res lookResult) {
	names := e.due(res)
	if len(names) == 0 {
		return
	}
	e.cfg.Logger.Info("tracing", "apiservers", names, "window_seconds", e.cfg.Trace.Window.Seconds())
	ts := e.traceLook(ctx, names)
	if ctx.Err() != nil {
		return
	}
	for _, t := range ts {
		for _, err := range t.errs {
			e.cfg.Logger.Warn("trace error", "apiserver", t.name, "kind", kindOf(err), "error", cut(err.Error()))
		}
		args := []any{"apiserver", t.name, "window_seconds", t.stat.window, "bytes", t.stat.bytes, "decided", t.decided != nil}
		for _, st := range []string{StateStuck, StateProgressing, StateUndecided} {
			if n, ok := t.states[st]; ok {
				args = append(args, st, n)
			}
		}
		if t.stat.pause != nil {
			args = append(args, "server_pause_seconds", *t.stat.pause)
		}
		e.cfg.Logger.Info("trace", args...)
	}
	e.publishTraces(ts)
}

// publishTraces records the traces' decisions and costs, and puts the
// states they decided into the published snapshot (a new slice: the
// published one is immutable).
func (e *Exporter) publishTraces(ts []traced) {
	e.mu.Lock()
	defer e.mu.Unlock()
	snap := slices.Clone(e.snap)
	for _, t := range ts {
		for _, err := range t.errs {
			e.errs[[2]string{t.name, kindOf(err)}]++
		}
		st := e.traces[t.name]
		st.window, st.bytes, st.pause = t.stat.window, st.bytes+t.stat.bytes, t.stat.pause
		e.traces[t.name] = st
		if t.stat.pause != nil {
			e.pauseTotal[t.name] += *t.stat.pause
		}
		if t.decided == nil {
			// Undecided now: a decision is not carried past a trace
			// that could not confirm it.
			delete(e.decisions, t.name)
			continue
		}
		e.decisions[t.name] = *t.decided
		for i := range snap {
			// The look's rows stay; the states become the trace's when it
			// judged the same watches the look left undecided.
			if snap[i].name == t.name && slices.Equal(snap[i].undecided, t.decided.keys) {
				snap[i].states = t.states
			}
		}
	}
	e.snap = snap
}

// paren is " (pin it with hint)", or "" for no hint.
func paren(hint string) string {
	if hint == "" {
		return ""
	}
	return " (pin it with " + hint + ")"
}
