package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/watches"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// Between sample A and sample B, the watchers' progress is either read
// from a second debug=2 dump (sample B's) or from an execution trace of the
// interval: GET /debug/pprof/trace?seconds=N (net/http/pprof Trace, served
// by kube-apiserver at k8s.io/apiserver pkg/server/routes/profiling.go:34
// and exempt from the request timeout as long-running,
// pkg/server/filters/longrunning.go:36). Starting the Go 1.22+ tracer stops
// the world once for a constant amount of work; each goroutine is then
// written with its state and stack at every generation (about 1 s), one at
// a time, so the cost does not grow with the goroutines as a dump's does.
//
// The runtime allows one trace at a time: a second request is answered
// HTTP 500 "Could not enable tracing: execution tracer already enabled"
// (net/http/pprof/pprof.go:184-188 and runtime/trace/subscribe.go:75 in
// Go 1.26).

// Evidence is what tells stuck from slow between the samples.
type Evidence string

// The evidence choices.
const (
	// EvidenceAuto takes the debug=2 dump when its estimated pause fits
	// Config.MaxPause (it has itab words and parent goroutine ids), and
	// the execution trace otherwise.
	EvidenceAuto Evidence = "auto"
	// EvidenceDump takes debug=2 dumps only (within Config.MaxPause).
	EvidenceDump Evidence = "dump"
	// EvidenceTrace traces the interval and takes no debug=2 dump.
	EvidenceTrace Evidence = "trace"
)

// DefaultTraceBudget bounds the bytes of the trace of one instance when
// TraceConfig.Budget is 0: a 70 s trace of a kube-apiserver with 22,431
// goroutines measured 51 MB (issue 18, docs/diagnose-at-scale.md), so the
// default interval fits 2.5 times over before the budget stops a trace;
// at 102,000 goroutines a 70 s trace was 90 to 101 MB (issue 29).
const DefaultTraceBudget = 128 << 20

// defaultTraceProbe is the short trace that measures the rate first.
const defaultTraceProbe = time.Second

// minTraceWindow is the shortest trace worth taking after the probe.
const minTraceWindow = 2 * time.Second

// TraceConfig chooses the evidence and bounds the trace.
type TraceConfig struct {
	// Evidence is the choice; "" means EvidenceAuto.
	Evidence Evidence
	// Budget bounds the bytes of one instance's trace (the probe's
	// included); 0 means DefaultTraceBudget. The trace stops at a
	// generation's end when the next would not fit (budgetStop).
	Budget int64
	// Probe is the length of the rate probe; 0 means 1 s.
	Probe time.Duration
	// Margin is how long past its window a trace may take to arrive
	// before it is cut (a server that ignores seconds=); 0 means
	// DefaultTraceMargin. The request timeout bounds it too.
	Margin time.Duration
}

func (t TraceConfig) evidence() Evidence {
	if t.Evidence == "" {
		return EvidenceAuto
	}
	return t.Evidence
}

func (t TraceConfig) budget() int64 {
	if t.Budget <= 0 {
		return DefaultTraceBudget
	}
	return t.Budget
}

func (t TraceConfig) probe() time.Duration {
	if t.Probe <= 0 {
		return defaultTraceProbe
	}
	return t.Probe
}

// TraceTarget is a Target that also keeps the execution trace, as it
// streams (collect: <instance>/trace.out). StoreTrace may run while Store
// is called for other instances; it must consume body before returning.
type TraceTarget interface {
	StoreTrace(instance string, body io.Reader) error
}

// TraceResult is the execution trace of one instance, or why there is
// none.
type TraceResult struct {
	// Reason says why the trace was chosen as evidence.
	Reason string
	// Probe is the short trace that measured the rate; Fetch the trace of
	// the interval. Either is nil when not taken.
	Probe, Fetch *api.FetchInfo
	// Rate is the probe's bytes per second; Estimate the bytes per second
	// estimated for a long trace from the probe's generations (traceCost),
	// by which the window is chosen.
	Rate, Estimate float64
	// Requested is the window asked for, the interval; BudgetCut is set
	// when the byte budget stopped the trace before it.
	Requested time.Duration
	BudgetCut bool
	// stopWhy says why the trace was stopped early (Summary.Why).
	stopWhy string
	// Summary is what the trace proved (internal/watches keeps the watch
	// path of it); nil when it could not be read.
	Summary *watches.Trace
	// Err is why the trace is missing or partial: a fallback.
	Err error
	// Window says in words over which span the trace proves what it
	// proves ("no progress for 70 s").
	Window string

	pending  bool
	withheld *PauseBudgetError
	// suspects are the initial-phase watchers blocked sending in sample
	// A's debug=1 profile: the trace stops early only once at least as
	// many were seen, all progressing.
	suspects int
	// interrupted is set when ctx ended the trace (not the suspects).
	interrupted bool
}

// traceBytes is every byte the instance's traces returned.
func (ir *InstanceResult) traceBytes() int64 {
	if ir.Trace == nil {
		return 0
	}
	var n int64
	for _, f := range []*api.FetchInfo{ir.Trace.Probe, ir.Trace.Fetch} {
		if f != nil {
			n += f.Bytes
		}
	}
	return n
}

// TraceBusyError is a trace refused because one is already running in
// the server (the runtime allows one at a time).
type TraceBusyError struct {
	Instance string
	Message  string
}

func (e *TraceBusyError) Error() string {
	return fmt.Sprintf("%s: an execution trace is already running in this server (it allows one at a time): %s", e.Instance, e.Message)
}

// TraceBudgetError is a trace not taken because the byte budget, at the
// rate estimated from the probe (traceCost), allows less than the shortest window worth
// tracing.
type TraceBudgetError struct {
	Instance string
	Budget   int64
	Allowed  time.Duration
	Rate     float64
	// Hint names the setting of the budget; "" for none.
	Hint string
}

func (e *TraceBudgetError) Error() string {
	return fmt.Sprintf("%s: the trace budget of %s allows only %s at the rate of %s/s estimated from the probe%s", e.Instance, mib1(e.Budget), e.Allowed, mib1(int64(e.Rate)), paren(e.Hint))
}

// TraceUnsupportedError is a server whose Go runtime is older than 1.22:
// its traces are in a format the parser does not read.
type TraceUnsupportedError struct {
	Instance, GoVersion string
}

func (e *TraceUnsupportedError) Error() string {
	return fmt.Sprintf("%s: built with %s: an execution trace needs Go 1.22 or later", e.Instance, e.GoVersion)
}

// gatherEvidence is the debug=2 step of a sample: the dump as decideDump
// allows, or, in sample A, the choice of an execution trace of the
// interval instead (taken by traceRound before sample B).
func (sp *sampler) gatherEvidence() {
	cfg, ir := sp.cfg, sp.ir
	mode := cfg.Trace.evidence()
	switch {
	case sp.sample.ProfileStatus != 0:
		// /debug/pprof refused the profile: a dump or trace would be
		// refused too (evidenceText says so).
		return
	case ir.Trace != nil && sp.n > 1 && ir.Trace.Summary != nil:
		sp.sample.Notes = append(sp.sample.Notes, "no goroutine dump: the execution trace of the interval decides")
		return
	case mode == EvidenceDump || sp.n != 1 || cfg.Samples < 2 || !cfg.mayTrace() || sp.down != nil || cfg.Force:
		sp.dumpIfNeeded()
		return
	}
	if answer := cheapAnswer(sp.look); answer != "" {
		sp.dumpIfNeeded() // says no dump is needed, and why
		return
	}
	take, why, withheld, err := decideDump(cfg, sp.c.inst.Name, sp.look)
	if mode == EvidenceAuto && (take || err != nil) {
		ir.dumpEvidence = fmt.Sprintf("the debug=2 dumps (%s): they have itab words and parent goroutine ids", why)
		if err != nil {
			ir.dumpEvidence = fmt.Sprintf("the debug=2 dumps as far as allowed (%v)", err)
		}
		cfg.progress("sample %d/%d: %s: evidence: %s", sp.n, cfg.Samples, sp.c.inst.Name, ir.dumpEvidence)
		sp.dumpIfNeeded()
		return
	}
	reason := "an execution trace of the interval (evidence " + string(mode) + ")"
	if cfg.Hints.Evidence != "" {
		reason = "an execution trace of the interval (" + cfg.Hints.Evidence + " " + string(mode) + ")"
	}
	if mode == EvidenceAuto && withheld != nil {
		reason = fmt.Sprintf("an execution trace of the interval, not the debug=2 dump: %s%s (a trace stops the world once, for well under a millisecond)", withheld.Cost(), paren(budgetHint(cfg)))
	}
	ir.Trace = &TraceResult{Reason: reason, pending: true, withheld: withheld, suspects: initialInSend(sp.look)}
	cfg.progress("sample %d/%d: %s: evidence: %s", sp.n, cfg.Samples, sp.c.inst.Name, reason)
	sp.sample.Notes = append(sp.sample.Notes, "evidence: "+reason)
}

// mayTrace reports whether the fetches allowed include the evidence
// between the samples: the debug=2 dump (whose place a trace takes), or,
// with Only naming FileTrace without FileGoroutineDebug2 (serve), the
// trace alone: dumpIfNeeded then never dumps.
func (c Config) mayTrace() bool {
	return c.wants(api.FileGoroutineDebug2) || (len(c.Only) > 0 && c.wants(api.FileTrace))
}

// initialInSend counts the initial-phase watchers blocked sending in the
// cheap look's profile.
func initialInSend(look cheapLook) int {
	if look.profile == nil {
		return 0
	}
	n := 0
	for _, pc := range watches.FromAggregated(look.profile, watches.FormatDebug1).PhaseCounts {
		if pc.Phase == api.PhaseInitial && pc.InSend {
			n += pc.Count
		}
	}
	return n
}

// budgetHint names the pause budget, for the reason of a trace.
func budgetHint(cfg Config) string {
	if cfg.Hints.MaxPause == "" {
		return fmt.Sprintf("pause budget %s", cfg.MaxPause)
	}
	return fmt.Sprintf("%s %s", cfg.Hints.MaxPause, cfg.MaxPause)
}

// tracePending reports whether some instance chose a trace in sample A.
func tracePending(results []InstanceResult) bool {
	for _, r := range results {
		if r.Trace != nil && r.Trace.pending {
			return true
		}
	}
	return false
}

// traceRound replaces the wait before sample B: each instance that chose
// a trace is traced for the interval (or less, see traceInstance) and
// sampled at once after; the others wait the interval as usual. The
// instances run concurrently, all at once: a trace is a stream, so cheap
// to the reader, and waiting for a slot would stretch the interval.
func traceRound(ctx context.Context, cfg Config, clients []*client, results []InstanceResult, target, raw Target) {
	parallel(ctx, len(clients), len(clients), func(i int) {
		c, ir := clients[i], &results[i]
		if c == nil {
			return
		}
		if ir.Trace != nil && ir.Trace.pending {
			ir.Trace.pending = false
			traceInstance(ctx, cfg, c, ir, raw)
			if ir.Trace.Summary == nil {
				note := fmt.Sprintf("no execution trace: %v; %s", ir.Trace.Err, withoutTrace(cfg))
				ir.Notes = append(ir.Notes, note)
				cfg.progress("%s: %s", c.inst.Name, note)
				if w := ir.Trace.withheld; w != nil {
					ir.Withheld = append(ir.Withheld, w)
				}
			}
		} else {
			cfg.progress("%s: waiting %s for sample 2/%d%s", c.inst.Name, cfg.Interval, cfg.Samples, paren(cfg.Hints.Interval))
			select {
			case <-ctx.Done():
				return
			case <-cfg.Clock.After(cfg.Interval):
			}
		}
		sample, errs := takeSample(ctx, cfg, c, 2, ir, target)
		ir.Samples = append(ir.Samples, sample)
		ir.Errors = append(ir.Errors, errs...)
	})
}

// goAtLeast122 reports whether a goVersion ("go1.26.8", "go1.22rc1",
// "devel go1.27-abc") is Go 1.22 or later; unknown versions pass (the
// trace's own header is checked by the parser).
func goAtLeast122(v string) bool {
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
func isTraceBusy(err error) (*TraceBusyError, bool) {
	var he *HTTPError
	if errors.As(err, &he) && he.Status == 500 && strings.Contains(he.Message, "already enabled") {
		return &TraceBusyError{Instance: he.Instance, Message: he.Message}, true
	}
	return nil, false
}

// traceSeconds is the query value of a window: whole milliseconds.
func traceSeconds(d time.Duration) string {
	return strconv.FormatFloat(d.Round(time.Millisecond).Seconds(), 'f', -1, 64)
}

// tracePath is the trace request of a window.
func tracePath(d time.Duration) string { return "/debug/pprof/trace?seconds=" + traceSeconds(d) }

// evidenceText says what told stuck from slow between the samples, and
// why: the manifest's and the report's Evidence.
func (ir *InstanceResult) evidenceText() string {
	tr := ir.Trace
	switch st := ir.ProfileStatus(); {
	case st != 0:
		return refusedEvidence(st)
	case tr == nil:
		return ir.dumpEvidence
	case tr.Summary == nil:
		return fmt.Sprintf("no execution trace (%v), though chosen: %s", tr.Err, tr.Reason)
	}
	return fmt.Sprintf("%s; %s", tr.Reason, tr.Window)
}
