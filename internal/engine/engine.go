// Package engine is the one route from a cluster (or a loaded bundle) to a
// finished report: run the samples, load them, group them per API server
// process, diagnose, and give each server what the run recorded of its
// instance (notes, cost, evidence). diagnose, its fleet of contexts,
// collect, analyze, replay --from and serve's looks each build a Config
// and make one call to Run, so their reports cannot drift apart.
//
// It names no flag: the caller's words come in through Words, and what a
// caller phrases (a dump withheld for its pause budget) comes back typed.
package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/bundle"
	"github.com/watch-doctor/watch-doctor/internal/diagnosis"
	"github.com/watch-doctor/watch-doctor/internal/live"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	"github.com/watch-doctor/watch-doctor/internal/watches"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// Config is what Run needs. The clock and the progress writer are
// Live.Clock and Live.Progress.
type Config struct {
	// Live says what to read from the cluster and how. Ignored when
	// Loaded is set.
	Live model.Config
	// Loaded, when set, is diagnosed instead of reading a cluster: the
	// captures analyze and replay --from load from files.
	Loaded *bundle.Loaded
	// Raw, when set, receives every response as read, unparsed (collect
	// writes its bundle so), and no report is made: Result.Report stays
	// nil and Result.Run is the bundle's record.
	Raw model.Target
	// Diagnosis tunes the rules.
	Diagnosis diagnosis.Options
	// Notes are the caller's own notes on the run (what it resolved that
	// the user should know), put before the run's.
	Notes []string
	// Phrasing phrases the run's typed errors in the caller's terms.
	Phrasing Phrasing
	// AuditLogs are the API server audit logs given to the run
	// (api.FileAuditLog), read once, after the last sample: their watch
	// requests are joined to the findings' clients and candidates, and
	// with Raw kept in the target (an AuditTarget). A Loaded bundle's
	// logs are read with them. A live run's caller looks at their form
	// first (CheckAuditLogs), so a log in no form fails before a sample.
	AuditLogs []bundle.AuditSource
}

// Phrasing is the caller's functions that phrase, in its terms (the CLI:
// its flags), the typed errors of the run for the report: functions, not
// words (english.Words), because the phrase depends on the error's
// fields. A nil field keeps the error's own text.
type Phrasing struct {
	// Errors phrases the errors of one instance for the report; nil
	// gives each error's own text.
	Errors func(model.InstanceResult) []string
	// Withheld phrases a debug=2 dump not taken for its estimated pause;
	// nil gives the error's own text.
	Withheld func(*model.PauseBudgetError) string
}

// Process is one API server process of the run (a report's server),
// its identity as fields (never parsed from its display name).
type Process struct {
	// Instance is the instance read: its name (its address, or the
	// kubeconfig host when it could not be pinned), its address when
	// reached at its own, and Pinned, false when requests went through
	// the kubeconfig host, where a load balancer may answer each from
	// another process. Its Name is "" for files read alone.
	Instance model.Instance
	// ProcessStart is the process' start (process_start_time_seconds);
	// zero when unknown.
	ProcessStart time.Time
	// Restarted is set when the instance restarted between samples:
	// each process is a server of its own.
	Restarted bool
	// Name is the report's name for it (bundle.DisplayName), the
	// APIServer field of its findings.
	Name string
	// Input is what the diagnosis read of it.
	Input watches.Server
}

// Result is the finished report and what it was made of.
type Result struct {
	// Report is the finished report; nil with Config.Raw, or when the
	// run failed before anything was read.
	Report *api.Report
	// Run is what was fetched of each instance (a bundle's manifest is
	// Run.Manifest); nil with Config.Loaded.
	Run *live.Result
	// Loaded are the parsed captures; nil with Config.Raw.
	Loaded *bundle.Loaded
	// Processes are the report's servers, in the report's order.
	Processes []Process
	// Notes are the run's notes, the caller's first, similar ones
	// summarized: also the report's first warnings.
	Notes []string
	// Errors are the instances' errors in the caller's words (Phrasing.Errors).
	Errors []string
	// Withheld are the debug=2 dumps not taken for their estimated pause.
	Withheld []*model.PauseBudgetError
	// AuditLogs are the manifest's record of the audit logs kept with
	// Raw.
	AuditLogs []api.AuditLogCopy
}

// ForceAdvised reports whether a dump was withheld for its estimated pause
// alone, where taking it anyway is sound advice (not when the server did
// not answer the fetches the estimate comes from).
func (r *Result) ForceAdvised() bool {
	for _, w := range r.Withheld {
		if w.Estimate.Known() {
			return true
		}
	}
	return false
}

// ErrNoInstance is returned, with the report of nothing, when no instance
// could be read at all.
var ErrNoInstance = errors.New("no API server instance could be read")

// Run reads the cluster (or takes Config.Loaded), diagnoses it and returns
// the finished report. An error of the run itself (discovery failed, ctx
// ended, in the fetches or in the diagnosis) comes back with what was read
// (Result.Run) and no report; ErrNoInstance comes back with the report of
// nothing.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Loaded != nil {
		res := &Result{Loaded: cfg.Loaded, Notes: Summarize(cfg.Notes)}
		cfg.AuditLogs = append(append([]bundle.AuditSource(nil), cfg.AuditLogs...), cfg.Loaded.AuditLogs...)
		if err := res.readAudit(ctx, &cfg); err != nil {
			return res, err
		}
		if err := res.diagnose(ctx, cfg, cfg.Loaded.Instances, nil); err != nil {
			return res, err
		}
		for _, c := range cfg.Loaded.Coverage {
			res.cover(c)
		}
		res.asideTraces(cfg.Loaded.Instances)
		return res, nil
	}
	if cfg.Raw != nil {
		run, err := live.Run(ctx, cfg.Live, cfg.Raw)
		res := &Result{Run: run}
		if run != nil {
			res.record(cfg)
		}
		if err == nil {
			// After the last sample: the requests of the run are in
			// the logs. An interrupted run keeps none.
			res.AuditLogs, err = storeAudit(ctx, cfg.AuditLogs, cfg.Raw)
		}
		return res, err
	}
	captures := live.NewCaptures()
	run, err := live.Run(ctx, cfg.Live, captures)
	if err != nil {
		return &Result{Run: run}, err
	}
	res := &Result{Run: run, Loaded: captures.Loaded(run)}
	res.record(cfg)
	if err := res.readAudit(ctx, &cfg); err != nil {
		return res, err
	}
	recorded := run.Manifest(api.Manifest{}).Instances
	if err := res.diagnose(ctx, cfg, recorded, run.Instances); err != nil {
		return res, err
	}
	res.attachPods(ctx, cfg)
	res.cover(run.Coverage)
	res.asideTraces(recorded)
	if len(res.Loaded.Captures) == 0 {
		first := "nothing fetched"
		if len(res.Errors) > 0 {
			first = res.Errors[0]
		}
		return res, fmt.Errorf("%w: %s", ErrNoInstance, first)
	}
	return res, nil
}

// cover gives the report how many of the live instances the run read
// (analyzing several bundles: the last's). Fewer than the live ones makes
// the report incomplete: a stuck watch on an instance not read is in no
// finding, so the run is no all-clear.
func (r *Result) cover(c api.InstanceCoverage) {
	if r.Report == nil {
		return
	}
	r.Report.Instances = &c
	if c.Live > 0 && c.Read < c.Live {
		r.Report.Incomplete = append(r.Report.Incomplete, c.Text()+": a stuck watch on an instance not read is in no finding")
	}
}

// asideTraces makes the report incomplete for each instance recorded
// (the run's, or a bundle's manifest) whose execution trace, its chosen
// evidence, was set aside with nothing in its place (api.Instance's
// Incomplete, from model.InstanceResult.AsideIncomplete): its watches
// were not decided, so neither the run nor analyze of its bundle is an
// all-clear.
func (r *Result) asideTraces(recorded []api.Instance) {
	if r.Report == nil {
		return
	}
	for _, inst := range recorded {
		r.Report.Incomplete = append(r.Report.Incomplete, inst.Incomplete...)
	}
}

// record fills the run's notes, errors and withheld dumps.
func (r *Result) record(cfg Config) {
	r.Notes = Summarize(append(append([]string(nil), cfg.Notes...), r.Run.Notes...))
	for _, ir := range r.Run.Instances {
		if cfg.Phrasing.Errors != nil {
			r.Errors = append(r.Errors, cfg.Phrasing.Errors(ir)...)
		} else {
			for _, err := range ir.Errors {
				r.Errors = append(r.Errors, err.Error())
			}
		}
		if ir.ProfileStatus() != 0 {
			// /debug/pprof refused (profiling off, or RBAC): no dump to
			// withhold or to force.
			continue
		}
		r.Withheld = append(r.Withheld, ir.Withheld...)
	}
}
