package exporter

import (
	"context"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/watch-doctor/watch-doctor/internal/watches"
)

// Exporter runs the looks and holds what the last one found. Safe for
// concurrent use: the loop (Run) writes under mu, scrapes read under mu.
type Exporter struct {
	cfg Config
	reg *prometheus.Registry
	// discoveryName labels failures to find the instances: the
	// kubeconfig or in-cluster host.
	discoveryName string
	ready         atomic.Bool

	mu sync.Mutex
	// Guarded by mu.
	snap         []instanceSnap
	coverage     coverage
	errs         map[[2]string]float64 // (apiserver, kind) -> count
	pauseTotal   map[string]float64
	looks        map[string]float64 // "ok" | "failed" -> count
	lastComplete time.Time
	// Per instance, of the traces (trace.go): the last decision, when
	// the last trace started, and what the traces cost.
	decisions map[string]decision
	lastTrace map[string]time.Time
	traces    map[string]traceStat
	// unpinnedSaid: the instance was logged as not traced (unpinned).
	unpinnedSaid map[string]bool
	// prevSample is each instance's sample of the last look, and
	// closures what the server closed between looks (closures.go).
	prevSample map[string]watches.Sample
	closures   closureCounts
}

// Look results of watchdoctor_looks_total.
const (
	ResultOK     = "ok"
	ResultFailed = "failed"
)

// New returns an exporter with its own registry: our collector, the Go
// runtime's and the process's (RSS, for the memory bound).
func New(cfg Config) (*Exporter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	e := &Exporter{
		cfg: cfg, reg: prometheus.NewRegistry(), discoveryName: "unknown",
		errs: map[[2]string]float64{}, pauseTotal: map[string]float64{},
		looks:     map[string]float64{ResultOK: 0, ResultFailed: 0},
		decisions: map[string]decision{}, lastTrace: map[string]time.Time{}, traces: map[string]traceStat{},
		unpinnedSaid: map[string]bool{},
		prevSample:   map[string]watches.Sample{}, closures: newClosureCounts(),
	}
	if cfg.Live.REST != nil {
		e.discoveryName = Label(hostOf(cfg.Live.REST.Host))
	}
	if err := e.reg.Register((*collector)(e)); err != nil {
		return nil, err
	}
	e.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return e, nil
}

func hostOf(server string) string {
	if u, err := url.Parse(server); err == nil && u.Host != "" {
		return u.Host
	}
	return server
}

// Registry is the exporter's registry (no global default registry).
func (e *Exporter) Registry() *prometheus.Registry { return e.reg }

// Ready reports whether a look has completed: the instances were found
// and at least one of them answered.
func (e *Exporter) Ready() bool { return e.ready.Load() }

// Run looks every Interval (jittered; backed off after looks that read
// nothing) until ctx ends, then returns nil. afterLook, when not nil, is
// called after each look with its number and outcome, once the timer of
// the next look is set (tests step a fake clock then).
func (e *Exporter) Run(ctx context.Context, afterLook func(n int, ok bool)) error {
	failures := 0
	for n := 1; ; n++ {
		ok := e.LookOnce(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if ok {
			failures = 0
		} else {
			failures++
		}
		wait := e.cfg.wait(failures)
		t := e.cfg.Clock.NewTimer(wait)
		if !ok {
			e.cfg.Logger.Warn("look failed: backing off", "failures", failures, "next_look_in", wait.String())
		}
		if afterLook != nil {
			afterLook(n, ok)
		}
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C():
		}
	}
}

// LookOnce runs one look and publishes it; ok is false when it read
// nothing (no instance found, or none answered).
func (e *Exporter) LookOnce(ctx context.Context) (ok bool) {
	start := e.cfg.Clock.Now()
	res := e.look(ctx)
	if ctx.Err() != nil {
		// Shutting down: a look cut short is not published.
		return false
	}
	if res.err != nil {
		e.cfg.Logger.Error("look failed: no API server instance found", "apiserver", e.discoveryName, "kind", errorKind(res.err), "error", cut(res.err.Error()))
	}
	for _, s := range res.instances {
		ok = ok || s.read
		for _, err := range res.errs[s.name] {
			e.cfg.Logger.Warn("look error", "apiserver", s.name, "kind", errorKind(err), "error", cut(err.Error()))
		}
		args := []any{"apiserver", s.name, "ok", s.ok, "duration_seconds", s.took.Seconds(), "initializing", total(s.resources)}
		if s.pause != nil {
			args = append(args, "server_pause_seconds", s.pause.Sum, "server_pauses", s.pause.Count, "server_pause_max_seconds", s.pause.LargestAtMost)
		}
		e.cfg.Logger.Info("look", args...)
	}
	e.publish(res, ok)
	if ok {
		e.ready.Store(true)
		e.traceIfDue(ctx, res)
	}
	e.cfg.Logger.Debug("look done", "ok", ok, "seconds", e.cfg.Clock.Since(start).Seconds())
	return ok
}

func total(rows []resourceRow) int {
	n := 0
	for _, r := range rows {
		n += r.watches
	}
	return n
}

// maxLogError bounds an error text in a log record (it quotes servers).
const maxLogError = 512

func cut(s string) string {
	if len(s) <= maxLogError {
		return s
	}
	return s[:maxLogError] + "..."
}

// publish swaps in the look's snapshot and counts its errors; counters of
// instances no longer found are dropped, which bounds them.
func (e *Exporter) publish(res lookResult, ok bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if ok {
		e.looks[ResultOK]++
		e.lastComplete = e.cfg.Clock.Now()
	} else {
		e.looks[ResultFailed]++
	}
	if res.err != nil {
		e.errs[[2]string{e.discoveryName, KindDiscovery}]++
		// The instances of the last look stay, marked failed and with no
		// rows: stale ages must not keep an alert firing, and the
		// failing-look alert needs their series.
		failed := make([]instanceSnap, len(e.snap))
		for i, s := range e.snap {
			failed[i] = instanceSnap{name: s.name, at: s.at, took: s.took}
		}
		e.snap = failed
		// Nothing was read; the live count and the route stay the last
		// ones known.
		e.coverage.read = 0
		return
	}
	e.coverage = res.coverage
	keep := map[string]bool{e.discoveryName: true}
	for _, s := range res.instances {
		keep[s.name] = true
		for _, err := range res.errs[s.name] {
			e.errs[[2]string{s.name, kindOf(err)}]++
		}
		if s.pause != nil {
			e.pauseTotal[s.name] += s.pause.Sum
		}
	}
	for k := range e.errs {
		if !keep[k[0]] {
			delete(e.errs, k)
		}
	}
	for k := range e.pauseTotal {
		if !keep[k] {
			delete(e.pauseTotal, k)
		}
	}
	for k := range e.lastTrace {
		if !keep[k] {
			delete(e.traces, k)
			delete(e.decisions, k)
			delete(e.lastTrace, k)
		}
	}
	e.snap = res.instances
}
