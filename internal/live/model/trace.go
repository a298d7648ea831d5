package model

import (
	"fmt"
	"io"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/english"
	"github.com/watch-doctor/watch-doctor/internal/watches"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// DefaultTraceMargin is how long past its window a trace may take to
// arrive: net/http/pprof's Trace stops the tracer once the window has
// passed and the rest is a flush, so a server still sending after this
// ignores seconds= and is cut, not read until the request deadline.
const DefaultTraceMargin = 10 * time.Second

func (t TraceConfig) MarginOrDefault() time.Duration {
	if t.Margin <= 0 {
		return DefaultTraceMargin
	}
	return t.Margin
}

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

func (t TraceConfig) EvidenceOrDefault() Evidence {
	if t.Evidence == "" {
		return EvidenceAuto
	}
	return t.Evidence
}

func (t TraceConfig) BudgetOrDefault() int64 {
	if t.Budget <= 0 {
		return DefaultTraceBudget
	}
	return t.Budget
}

func (t TraceConfig) ProbeOrDefault() time.Duration {
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
	// StopWhy says why the trace was stopped early (Summary.Why).
	StopWhy string
	// Summary is what the trace proved (internal/watches keeps the watch
	// path of it); nil when it could not be read.
	Summary *watches.Trace
	// Err is why the trace is missing or partial: a fallback.
	Err error
	// SetAside is set when a trace was read but set aside (Err says
	// why): it cannot be a live trace of the interval, or it may be of
	// another process. Nothing is decided from it, and no debug=2 dump
	// takes its place unless Config.Force.
	SetAside bool
	// Took is how long the trace of the interval took to arrive, on the
	// run's clock, from its request to the end of its body.
	Took time.Duration
	// Window says in words over which span the trace proves what it
	// proves ("no progress for 70 s").
	Window string

	Pending  bool
	Withheld *PauseBudgetError
	// Suspects are the initial-phase watchers blocked sending in sample
	// A's debug=1 profile: the trace stops early only once at least as
	// many were seen, all progressing.
	Suspects int
	// Interrupted is set when ctx ended the trace (not the suspects).
	Interrupted bool
}

// TraceBytes is every byte the instance's traces returned.
func (ir *InstanceResult) TraceBytes() int64 {
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
	return fmt.Sprintf("%s: the trace budget of %s allows only %s at the rate of %s/s estimated from the probe%s", e.Instance, Mib1(e.Budget), e.Allowed, Mib1(int64(e.Rate)), english.Paren(e.Hint))
}

// TraceUnsupportedError is a server whose Go runtime is older than 1.22:
// its traces are in a format the parser does not read.
type TraceUnsupportedError struct {
	Instance, GoVersion string
}

func (e *TraceUnsupportedError) Error() string {
	return fmt.Sprintf("%s: built with %s: an execution trace needs Go 1.22 or later", e.Instance, e.GoVersion)
}

// EvidenceText says what told stuck from slow between the samples, and
// why: the manifest's and the report's Evidence.
func (ir *InstanceResult) EvidenceText() string {
	tr := ir.Trace
	switch st := ir.ProfileStatus(); {
	case st != 0:
		return refusedEvidence(st)
	case tr == nil:
		return ir.DumpEvidence
	case tr.Summary == nil:
		return fmt.Sprintf("no execution trace (%v), though chosen: %s", tr.Err, tr.Reason)
	}
	return fmt.Sprintf("%s; %s", tr.Reason, tr.Window)
}

// AsideIncomplete says why the run is incomplete when the instance's
// chosen evidence, its execution trace, was set aside and no debug=2
// dump of a later sample took its place (Config.Force takes one); ""
// otherwise. Such a run is never "no watch stuck".
func (ir *InstanceResult) AsideIncomplete() string {
	tr := ir.Trace
	if tr == nil || !tr.SetAside {
		return ""
	}
	for _, s := range ir.Samples[min(1, len(ir.Samples)):] {
		for _, f := range s.Fetches {
			if f.Kind == api.FileGoroutineDebug2 && f.Error == "" {
				return ""
			}
		}
	}
	return fmt.Sprintf("%v; no goroutine dump took its place, so the watches it was chosen to decide are not decided", tr.Err)
}

// Mib1 prints bytes as MiB with one decimal.
func Mib1(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
