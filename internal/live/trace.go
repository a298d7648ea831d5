package live

import (
	"context"
	"fmt"

	"github.com/watch-doctor/watch-doctor/internal/english"
	"github.com/watch-doctor/watch-doctor/internal/live/harm"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	"github.com/watch-doctor/watch-doctor/internal/live/tracefetch"
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

// gatherEvidence is the debug=2 step of a sample: the dump as harm.DecideDump
// allows, or, in sample A, the choice of an execution trace of the
// interval instead (taken by traceRound before sample B).
func (sp *sampler) gatherEvidence() {
	cfg, ir := sp.cfg, sp.ir
	mode := cfg.Trace.EvidenceOrDefault()
	switch {
	case sp.sample.ProfileStatus != 0:
		// /debug/pprof refused the profile: a dump or trace would be
		// refused too (evidenceText says so).
		return
	case sp.elsewhere:
		// Another connection samples this process (checkSampledElsewhere).
		return
	case ir.Trace != nil && sp.n > 1 && ir.Trace.Summary != nil:
		sp.sample.Notes = append(sp.sample.Notes, "no goroutine dump: the execution trace of the interval decides")
		return
	case ir.Trace != nil && sp.n > 1 && ir.Trace.SetAside:
		// A server that answered the trace so is not asked for a dump
		// in its place. Force takes one: it dumps in sample 1 already,
		// and never traces.
		sp.sample.Notes = append(sp.sample.Notes, "no goroutine dump: the execution trace of the interval was set aside, and no dump takes its place"+english.Paren(forceHint(cfg)))
		return
	case mode == model.EvidenceDump || sp.n != 1 || cfg.Samples < 2 || !mayTrace(cfg) || sp.down != nil || cfg.Force:
		sp.dumpIfNeeded()
		return
	}
	if answer := harm.CheapAnswer(sp.look); answer != "" {
		sp.dumpIfNeeded() // says no dump is needed, and why
		return
	}
	take, why, withheld, err := harm.DecideDump(cfg, sp.c.Inst.Name, sp.look)
	if mode == model.EvidenceAuto && (take || err != nil) {
		ir.DumpEvidence = fmt.Sprintf("the debug=2 dumps (%s): they have itab words and parent goroutine ids", why)
		if err != nil {
			ir.DumpEvidence = fmt.Sprintf("the debug=2 dumps as far as allowed (%v)", err)
		}
		cfg.Progressf("sample %d/%d: %s: evidence: %s", sp.n, cfg.Samples, sp.c.Inst.Name, ir.DumpEvidence)
		sp.dumpIfNeeded()
		return
	}
	reason := "an execution trace of the interval (evidence " + string(mode) + ")"
	if cfg.Words.Evidence != "" {
		reason = "an execution trace of the interval (" + cfg.Words.Evidence + " " + string(mode) + ")"
	}
	if mode == model.EvidenceAuto && withheld != nil {
		reason = fmt.Sprintf("an execution trace of the interval, not the debug=2 dump: %s%s (a trace stops the world once, for well under a millisecond)", withheld.Cost(), english.Paren(budgetHint(cfg)))
	}
	ir.Trace = &model.TraceResult{Reason: reason, Pending: true, Withheld: withheld, Suspects: sp.look.InitialInSend()}
	cfg.Progressf("sample %d/%d: %s: evidence: %s", sp.n, cfg.Samples, sp.c.Inst.Name, reason)
	sp.sample.Notes = append(sp.sample.Notes, "evidence: "+reason)
}

// mayTrace reports whether the fetches allowed include the evidence
// between the samples: the debug=2 dump (whose place a trace takes), or,
// with Only naming FileTrace without FileGoroutineDebug2 (serve), the
// trace alone: dumpIfNeeded then never dumps.
func mayTrace(c model.Config) bool {
	return c.Wants(api.FileGoroutineDebug2) || (len(c.Only) > 0 && c.Wants(api.FileTrace))
}

// budgetHint names the pause budget, for the reason of a trace.
func budgetHint(cfg model.Config) string {
	if cfg.Words.MaxPause == "" {
		return fmt.Sprintf("pause budget %s", cfg.MaxPause)
	}
	return fmt.Sprintf("%s %s", cfg.Words.MaxPause, cfg.MaxPause)
}

// withoutTrace says what sample 2 does without the trace tr: a trace set
// aside is not replaced by a debug=2 dump (the server that answered it so
// is not asked to stop the world instead), and the watches it was to
// decide stay undecided.
func withoutTrace(cfg model.Config, tr *model.TraceResult) string {
	if !tr.SetAside {
		return harm.WithoutTrace(cfg)
	}
	return "sample 2 takes no goroutine dump in its place" + english.Paren(forceHint(cfg)) + ": the watches it was to decide stay undecided"
}

// forceHint says how to take a dump in place of a trace set aside.
func forceHint(cfg model.Config) string {
	if cfg.Words.Force == "" {
		return ""
	}
	return cfg.Words.Force + " takes one"
}

// tracePending reports whether some instance chose a trace in sample A.
func tracePending(results []model.InstanceResult) bool {
	for _, r := range results {
		if r.Trace != nil && r.Trace.Pending {
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
func traceRound(ctx context.Context, cfg model.Config, clients []*model.Client, results []model.InstanceResult, target, raw model.Target) {
	model.Parallel(ctx, len(clients), len(clients), func(i int) {
		c, ir := clients[i], &results[i]
		if c == nil {
			return
		}
		if ir.Trace != nil && ir.Trace.Pending {
			ir.Trace.Pending = false
			tracefetch.TraceInstance(ctx, cfg, c, ir, raw)
			if ir.Trace.Summary == nil {
				note := fmt.Sprintf("no execution trace: %v; %s", ir.Trace.Err, withoutTrace(cfg, ir.Trace))
				ir.Notes = append(ir.Notes, note)
				cfg.Progressf("%s: %s", c.Inst.Name, note)
				if w := ir.Trace.Withheld; w != nil {
					ir.Withheld = append(ir.Withheld, w)
				}
			}
		} else {
			cfg.Progressf("%s: waiting %s for sample 2/%d%s", c.Inst.Name, cfg.Interval, cfg.Samples, english.Paren(cfg.Words.Interval))
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
