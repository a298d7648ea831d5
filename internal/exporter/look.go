package exporter

import (
	"context"
	"errors"
	"io"
	"net"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/diagnosis"
	"github.com/watch-doctor/watch-doctor/internal/engine"
	"github.com/watch-doctor/watch-doctor/internal/live"
	"github.com/watch-doctor/watch-doctor/internal/live/discovery"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	"github.com/watch-doctor/watch-doctor/internal/watches"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/metrics"
)

// lookKinds are the fetches of a look: the cheap look, and never the
// debug=2 dump (FileGoroutineDebug1 alone reads the profile without it).
var lookKinds = []api.FileKind{api.FileMetrics, api.FileAPFRequests, api.FileAPFLevels, api.FileGoroutineDebug1}

// Error kinds of watchdoctor_look_errors_total: a fixed set.
const (
	KindDiscovery         = "discovery"
	KindForbidden         = "forbidden"
	KindProfilingDisabled = "profiling_disabled"
	KindTimeout           = "timeout"
	KindHTTP              = "http_status"
	KindUnreachable       = "unreachable"
	KindPause             = "pause_reading"
	KindOther             = "other"
	// The kinds of a trace's failure (trace.go): a trace refused by
	// RBAC (403) or by --profiling=false (404); one already running in
	// the server; a server built with Go older than 1.22; a budget that
	// allows less than the shortest window; a trace cut short (only what
	// was read counts); the traced look past its deadline; any other.
	KindTraceForbidden   = "trace_forbidden"
	KindTraceNoProfiling = "trace_profiling_disabled"
	KindTraceBusy        = "trace_busy"
	KindTraceUnsupported = "trace_unsupported"
	KindTraceBudget      = "trace_budget"
	KindTraceCut         = "trace_cut_short"
	KindTraceTimeout     = "trace_timeout"
	KindTraceFailed      = "trace_failed"
)

// errorKind sorts an error of a look into one of the kinds.
func errorKind(err error) string {
	var fe *model.ForbiddenError
	var pe *model.ProfilingDisabledError
	var te *model.TimeoutError
	var he *model.HTTPError
	var ue *discovery.UnreachableError
	var ne net.Error
	switch {
	case errors.As(err, &fe):
		return KindForbidden
	case errors.As(err, &pe):
		return KindProfilingDisabled
	case errors.As(err, &te), errors.Is(err, context.DeadlineExceeded):
		return KindTimeout
	case errors.As(err, &he):
		return KindHTTP
	case errors.As(err, &ue), errors.As(err, &ne):
		return KindUnreachable
	}
	return KindOther
}

// lookResult is one look of every instance.
type lookResult struct {
	// err is set when the instances could not even be found.
	err       error
	instances []instanceSnap
	// errs are the look's errors per instance, for the counters and logs.
	errs map[string][]error
	// coverage is how many of the live instances the look read, and how.
	coverage coverage
}

// look runs one cheap look of every instance, then reads /metrics again
// for the pauses it cost.
func (e *Exporter) look(ctx context.Context) lookResult {
	cfg := e.cfg.Live
	cfg.Samples, cfg.Only, cfg.Force, cfg.Progress = 1, lookKinds, false, nil
	eres, err := diagnose(ctx, cfg)
	if err != nil {
		return lookResult{err: err}
	}
	res, loaded, report := eres.Run, eres.Loaded, eres.Report
	end := e.cfg.Clock.Now()
	after := e.pausesAfter(ctx, cfg, res)
	out := lookResult{errs: map[string][]error{}, coverage: coverageOf(res)}
	b := bounds{users: e.cfg.TopUsers, resources: e.cfg.MaxResources, levels: e.cfg.MaxLevels}
	for _, ir := range res.Instances {
		name := Label(ir.Instance.Name)
		snap := instanceSnap{name: name, pinned: ir.Instance.Pinned, ok: len(ir.Errors) == 0, at: end, took: lookDuration(ir, end)}
		out.errs[name] = append(out.errs[name], ir.Errors...)
		for _, s := range eres.Processes {
			if s.Instance.Name != ir.Instance.Name || len(s.Input.Samples) == 0 {
				continue
			}
			sample := s.Input.Samples[len(s.Input.Samples)-1]
			at := sample.CapturedAt
			if at.IsZero() {
				at = end
			}
			snap.fill(sample, at, b)
			snap.states = decided(report, s.Name, sample, snap.read)
			snap.undecided = undecidedKeys(sample)
			e.carry(&snap, sample)
			e.closuresSince(name, sample)
		}
		for _, c := range loaded.Captures {
			if c.Instance != ir.Instance.Name {
				continue
			}
			d, err := pauseDelta(c.MetricsSample, after[ir.Instance.Name])
			if err != nil {
				out.errs[name] = append(out.errs[name], &pauseError{err})
			}
			snap.pause = d
		}
		out.instances = append(out.instances, snap)
		if len(out.instances) == e.cfg.MaxInstances {
			break
		}
	}
	return out
}

// pauseError is a failure to read the server's pause histogram.
type pauseError struct{ err error }

func (e *pauseError) Error() string { return "reading the server's pauses: " + e.err.Error() }
func (e *pauseError) Unwrap() error { return e.err }

// lookDuration is from the first fetch of the instance's look to end.
func lookDuration(ir model.InstanceResult, end time.Time) time.Duration {
	for _, s := range ir.Samples {
		for _, f := range s.Fetches {
			if !f.StartedAt.IsZero() {
				return max(0, end.Sub(f.StartedAt))
			}
		}
	}
	return 0
}

// pausesAfter reads /metrics of the instances again, right after the
// look, and returns each one's pause histogram by instance name.
func (e *Exporter) pausesAfter(ctx context.Context, cfg model.Config, res *live.Result) map[string]*metrics.Sample {
	cfg.Only = []api.FileKind{api.FileMetrics}
	cfg.APIServers = nil
	for _, ir := range res.Instances {
		if !ir.Instance.Pinned {
			cfg.APIServers = nil
			break
		}
		cfg.APIServers = append(cfg.APIServers, ir.Instance.Name)
	}
	out := pauseReadings{}
	if _, err := live.Run(ctx, cfg, out); err != nil {
		return pauseReadings{}
	}
	return out
}

// pauseReadings is the Target of pausesAfter: of each instance's
// /metrics, the pause histogram alone is parsed (metrics.Parser.Families),
// not the 2 MB of the rest, which the look parsed already.
type pauseReadings map[string]*metrics.Sample

func (p pauseReadings) Store(instance string, _ int, kind api.FileKind, body io.Reader) error {
	if kind != api.FileMetrics {
		_, err := io.Copy(io.Discard, body)
		return err
	}
	s, err := metrics.Parser{Families: []string{metrics.SchedPausesOther, metrics.SchedPausesStoppingOther}}.Parse(body, instance+"/metrics")
	if err != nil {
		return err
	}
	p[instance] = s
	return nil
}

// pauseDelta is how the non-GC pause histogram grew from before to after;
// nil without both readings or when the server exports no histogram.
func pauseDelta(before, after *metrics.Sample) (*metrics.PauseDelta, error) {
	if before == nil || after == nil {
		return nil, nil
	}
	p0, ok0, err := metrics.SchedPauses(before)
	if err != nil {
		return nil, err
	}
	p1, ok1, err := metrics.SchedPauses(after)
	if err != nil {
		return nil, err
	}
	if !ok0 || !ok1 {
		return nil, nil
	}
	d, err := p1.Since(p0)
	if err != nil {
		return nil, err
	}
	return &d, nil
}

// diagnose is serve's one call of the engine, for the look and the
// traced look alike: the report, and what it was made of. That nothing
// could be read is no error here: each instance's errors say why.
func diagnose(ctx context.Context, cfg model.Config) (*engine.Result, error) {
	res, err := engine.Run(ctx, engine.Config{Live: cfg, Diagnosis: diagnosis.Options{CaptureSlack: 5 * time.Second}})
	if errors.Is(err, engine.ErrNoInstance) {
		err = nil
	}
	return res, err
}

// pastStallBound reports whether rq had been initializing for longer than
// diagnosis.StallBound at a sample taken at (diagnosis.PastStallBound: a
// missing time counts as past): the cheap look alone cannot tell whether
// it is stuck.
func pastStallBound(rq apf.Request, at time.Time) bool {
	return diagnosis.PastStallBound(rq.StartTime, at)
}

// decided counts the initializing watches of server by what the cheap
// look decides (diagnosis.Diagnose, whose decideAggregated rules it reads):
// progressing when the debug=1 profile shows no initial-phase watcher
// blocked sending, or when initializing for less than diagnosis.StallBound
// (it cannot be stuck past that bound); undecided otherwise. The stuck
// count is left out (unknown) while any watch is undecided: only a
// goroutine dump or an execution trace decides it, and a look takes
// neither. nil when the APF dump was not read.
func decided(r *api.Report, server string, s watches.Sample, read bool) map[string]int {
	if !read {
		return nil
	}
	init := initializing(s.Requests)
	st := map[string]int{StateProgressing: 0, StateUndecided: 0}
	stuck := 0
	if s.Dump == nil {
		// No profile: Diagnose decides nothing; ages alone bound it.
		for _, rq := range init {
			if !pastStallBound(rq, s.CapturedAt) {
				st[StateProgressing]++
			} else {
				st[StateUndecided]++
			}
		}
	} else {
		for _, f := range r.Findings {
			if f.APIServer != server {
				continue
			}
			switch f.Type {
			case api.StuckInitialEvents:
				stuck++
			case api.SlowInitialEvents:
				st[StateProgressing]++
			case api.UndecidedInitialEvents:
				st[StateUndecided]++
			}
		}
		st[StateProgressing] += max(0, len(init)-stuck-st[StateProgressing]-st[StateUndecided])
	}
	if st[StateUndecided] == 0 {
		st[StateStuck] = stuck
	}
	return st
}

// kindOf is the kind an error of a look is counted as.
func kindOf(err error) string {
	var pe *pauseError
	var te *traceError
	switch {
	case errors.As(err, &te):
		return te.kind
	case errors.As(err, &pe):
		return KindPause
	}
	return errorKind(err)
}
