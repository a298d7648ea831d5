package diagnosis

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/english"
	"github.com/watch-doctor/watch-doctor/internal/watches"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/audit"
)

// StallBound is how long a watch may be initializing before the cheap
// look (APF dump_requests, a debug=1 or protobuf profile) counts it as a
// suspect: the no-progress bound of the proposed stall timeout
// (kubernetes PR 141899, 30 s). A watch initializing for less cannot be
// stuck past it, and StuckInitialEvents needs a wait of a minute.
const StallBound = 30 * time.Second

// partialRatio: a debug=2 dump holding fewer goroutines than this share
// of go_goroutines is partial. /metrics and the dump are read moments
// apart, so the counts differ a little in a whole dump.
const partialRatio = 0.9

// Options tune the diagnosis.
type Options struct {
	// CaptureSlack is how far the capture time may precede the dump: ages
	// computed from it may be short by that much. Bundles record the time
	// just before their first fetch, so the default is generous.
	CaptureSlack time.Duration
	// Words point the user, in the caller's terms, at how to change what
	// the warnings and advice question.
	Words english.Words
	// Audit are the watch requests of API server audit logs, joined to
	// the findings by user, path and start time (joinAudit).
	Audit []audit.Event
}

// DefaultCaptureSlack is the default Options.CaptureSlack.
const DefaultCaptureSlack = 30 * time.Second

// Diagnose turns the samples of each API server into an api.Report.
func Diagnose(servers []watches.Server, opts Options) *api.Report {
	r, _ := DiagnoseContext(context.Background(), servers, opts) // never done: no error
	return r
}

// DiagnoseContext is Diagnose, stopped once ctx is done (Ctrl-C): then
// it returns ctx.Err() and no report, whatever the size of the input
// (halt.go).
func DiagnoseContext(ctx context.Context, servers []watches.Server, opts Options) (*api.Report, error) {
	if opts.CaptureSlack <= 0 {
		opts.CaptureSlack = DefaultCaptureSlack
	}
	r := &api.Report{APIVersion: api.GroupVersion, Kind: api.KindReport, Findings: []api.Finding{}}
	for _, s := range servers {
		if done(ctx) {
			break
		}
		diagnoseServer(ctx, r, s, opts)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sortFindings(r.Findings)
	joined, _ := joinAudit(r.Findings, opts.Audit)
	r.Warnings = append(r.Warnings, joined...)
	r.Groups = groupFindings(r.Findings)
	r.Summary = summarize(r)
	r.Advice = advice(r, opts.Words)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return r, nil
}

// summarize totals the report: each finding counted in its type's Summary
// field (api.FindingTypes), the stuck ones' goroutines and seats, and the
// API servers' goroutines.
func summarize(r *api.Report) api.Summary {
	var s api.Summary
	for _, f := range r.Findings {
		if row, ok := api.FindingTypeOf(f.Type); ok {
			*row.Count(&s)++
		}
		if f.Type == api.StuckInitialEvents {
			s.StuckGoroutines += len(f.GoroutineIDs)
			if f.SeatsKnown() {
				s.StuckSeats += f.Client.Seats
			} else {
				s.StuckUnattributed++
			}
		}
	}
	for _, a := range r.APIServers {
		s.Goroutines += a.Goroutines
	}
	return s
}

func diagnoseServer(ctx context.Context, r *api.Report, s watches.Server, opts Options) {
	info, out := serverSteps(ctx, s, opts)
	out.add(closedWatches(s, opts.Audit))
	out.add(releaseStep(info))
	out.merge(r, info)
}

// serverSteps diagnoses one API server in named steps, each returning what
// it adds; diagnoseServer merges the sum into the report. The route: the
// execution trace alone when no debug=2 dump can decide (traceChoice,
// diagnoseTrace); no dump but APF dumps (diagnoseAPF); nothing (noDump); otherwise the last dump is
// described (describeDump), and an aggregated one decided as far as it
// can be (decideAggregated), a debug=2 one judged, attributed and
// annotated (dumpCase). Whatever the route, no count exceeds what APF
// lists (clampToAPF).
func serverSteps(ctx context.Context, s watches.Server, opts Options) (api.APIServer, added) {
	aside := traceAside(s)
	if aside != "" {
		s.Trace = nil
	}
	info, out := serverRoute(ctx, s, opts)
	clampToAPF(s, &info, &out)
	if aside != "" {
		out.warnings = append(out.warnings, aside)
	}
	return info, out
}

// serverRoute is serverSteps once the trace is checked against the
// samples (traceaside.go).
func serverRoute(ctx context.Context, s watches.Server, opts Options) (api.APIServer, added) {
	info := api.APIServer{Name: s.Name, Version: s.Version, Samples: len(s.Samples), Notes: append([]string(nil), s.Notes...)}
	last, prev := pickSamples(s.Samples)
	if why := mixedSamples(s.Samples, last, prev); why != "" && last >= 0 {
		return decideMixed(ctx, info, s, s.Samples[last], why)
	}
	useTrace, note := traceChoice(s, last)
	if useTrace {
		return diagnoseTrace(info, s, note)
	}
	if note != "" {
		info.Notes = append(info.Notes, note)
	}
	if why := anyMixed(s.Samples); why != "" && last < 0 && hasRequests(s) {
		return decideMixedAPF(ctx, info, s, why)
	}
	if last < 0 && hasRequests(s) {
		return diagnoseAPF(ctx, info, s)
	}
	if last < 0 {
		return noDump(info, s)
	}
	cur := s.Samples[last]
	info, out := describeDump(info, s.Name, cur)
	if !cur.Dump.APIServer {
		// Nothing in it is a watch of this server's: "no watch stuck"
		// would be said of another process.
		out.incomplete = append(out.incomplete, s.Name+": its goroutine dump holds no kube-apiserver code (no k8s.io/apiserver frame): it may be another process's, and decides no watch of this server")
	}
	if cur.Dump.Aggregated() {
		out.add(decideAggregated(s.Name, s.Version, cur))
		return info, out
	}
	c := dumpCase{ctx: ctx, server: s.Name, version: s.Version, cur: cur, opts: opts, partial: info.Coverage != nil, trace: s.Trace}
	if prev >= 0 {
		c.prev = &s.Samples[prev]
	}
	out.add(c.diagnose())
	return info, out
}

// coverage says how much of the server's goroutines d holds when it is
// partial: cut (see stacks.Stats.Partial), or holding clearly fewer
// goroutines than go_goroutines. nil when it looks whole.
func coverage(d *watches.Dump, m *watches.MetricsContext) *api.Coverage {
	if d.Aggregated() {
		return nil
	}
	c := &api.Coverage{Goroutines: d.Goroutines, Reason: d.Partial}
	if m != nil && m.Goroutines != nil && *m.Goroutines >= 1 {
		c.Of = int(*m.Goroutines)
	}
	if c.Reason == "" {
		if c.Of == 0 || float64(d.Goroutines) >= partialRatio*float64(c.Of) {
			return nil
		}
		c.Reason = fmt.Sprintf("it holds %d goroutines but go_goroutines said %d: it was cut, or comes from another process", d.Goroutines, c.Of)
	}
	if c.Of < c.Goroutines {
		// Counted at another moment: the total is not known.
		c.Of = 0
	}
	return c
}

func addMetricsInfo(info *api.APIServer, m *watches.MetricsContext) {
	if m == nil {
		return
	}
	if m.ResidentMemoryBytes != nil {
		info.ResidentMemoryBytes = *m.ResidentMemoryBytes
	}
	info.WatchersByResource = m.WatchersByResource
}

func sortFindings(fs []api.Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if ra, rb := a.Severity.Rank(), b.Severity.Rank(); ra != rb {
			return ra > rb
		}
		if a.APIServer != b.APIServer {
			return a.APIServer < b.APIServer
		}
		if a.Connection != b.Connection {
			return a.Connection < b.Connection
		}
		return a.Watcher.GoroutineID < b.Watcher.GoroutineID
	})
}
