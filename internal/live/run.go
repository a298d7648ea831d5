package live

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/watch-doctor/watch-doctor/internal/english"
	"github.com/watch-doctor/watch-doctor/internal/live/discovery"
	"github.com/watch-doctor/watch-doctor/internal/live/harm"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// Result is what Run did, per instance.
type Result struct {
	Instances []model.InstanceResult
	Notes     []string
	// Coverage is how many of the live instances were read (discovery/coverage.go).
	Coverage api.InstanceCoverage
}

// Counts returns how many requests of the run failed and how many an
// interrupt cut short.
func (r *Result) Counts() (failed, cut int) {
	for _, ir := range r.Instances {
		f, c := countErrors(ir.Errors)
		failed += f
		cut += c
	}
	return failed, cut
}

// defaultParallel is Config.Parallel's default: enough for the usual three
// to five API servers at once, few enough not to load a cluster.
const defaultParallel = 4

// Run discovers the instances, then takes cfg.Samples samples of each,
// cfg.Interval apart, handing every response to target. Instances are
// read concurrently, at most cfg.Parallel at a time.
//
// Each sample starts with the cheap look (/metrics, the APF dumps and the
// debug=1 profile), which costs the server almost nothing; the debug=2
// dump follows only when the cheap look cannot answer alone and its
// estimated pause is within cfg.MaxPause (see harm.DecideDump).
//
// Run fails fast: an instance that times out or refuses a connection is
// not asked again, and when every instance failed its first sample the
// interval is not waited out. When ctx ends after discovery, Run returns
// what was read so far with ctx's error.
func Run(ctx context.Context, cfg model.Config, target model.Target) (*Result, error) {
	cfg, err := withDefaults(cfg)
	if err != nil {
		return nil, err
	}
	raw := target
	target = &lockedTarget{t: target}
	disc, err := discoverInstances(ctx, cfg)
	if err != nil {
		return nil, err
	}
	res := &Result{Notes: disc.Notes}
	insts := disc.Instances
	clients := make([]*model.Client, len(insts))
	results := make([]model.InstanceResult, len(insts))
	// partial is what was read when ctx ended, with ctx's error: a
	// collect interrupted by Ctrl-C still writes a valid bundle of it.
	partial := func() (*Result, error) {
		res.Instances = results
		return res, ctx.Err()
	}
	probeAll(ctx, cfg, insts, results, clients)
	if ctx.Err() != nil {
		return partial()
	}
	var bal *discovery.BalancerRun
	if len(cfg.APIServers) == 0 && len(insts) > 0 && (countReachable(clients) == 0 || !insts[0].Pinned && disc.Live.Count > 1) {
		var notes []string
		var run discovery.BalancerRun
		clients, results, notes, run, err = discovery.ThroughBalancer(ctx, cfg, results, disc.Live)
		if err != nil {
			return nil, err
		}
		bal = &run
		res.Notes = append(res.Notes, notes...)
		if ctx.Err() != nil {
			return partial()
		}
	}
	if !takeSamples(ctx, cfg, clients, results, target, raw) {
		return partial()
	}
	harm.FinishCosts(ctx, cfg, clients, results)
	for i := range results {
		checkSameProcess(&results[i])
	}
	spreadMixed(results)
	for _, c := range clients {
		if c != nil && c.Conn != nil {
			c.Conn.Close()
		}
	}
	res.Instances = results
	res.Coverage = discovery.Coverage(results, disc.Live, bal)
	return res, nil
}

// withDefaults returns cfg with its defaults filled in and its progress
// writer serialized, or an error for an invalid Samples.
func withDefaults(cfg model.Config) (model.Config, error) {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Samples < 1 {
		return cfg, fmt.Errorf("invalid Config.Samples %d: at least 1", cfg.Samples)
	}
	if cfg.Parallel <= 0 {
		cfg.Parallel = defaultParallel
	}
	if cfg.ProgressEvery <= 0 {
		cfg.ProgressEvery = 5 * time.Second
	}
	if cfg.Progress != nil {
		cfg.Progress = &lockedWriter{w: cfg.Progress}
	}
	return cfg, nil
}

// discoverInstances lists the instances, within the request timeout.
func discoverInstances(ctx context.Context, cfg model.Config) (*discovery.Discovery, error) {
	dctx, dcancel := ctx, context.CancelFunc(func() {})
	if cfg.RequestTimeout > 0 {
		dctx, dcancel = context.WithTimeout(ctx, cfg.RequestTimeout)
	}
	defer dcancel()
	d, err := discovery.Discover(dctx, cfg.REST, cfg.APIServers)
	if err != nil {
		return nil, err
	}
	if len(cfg.APIServers) > 0 {
		// Pinned by the caller: the kubeconfig host is not asked.
		return d, nil
	}
	var endpoints []model.Instance
	if len(d.Instances) > 0 && d.Instances[0].Pinned {
		endpoints = d.Instances
	}
	var notes []string
	d.Live, notes = discovery.CountLive(dctx, cfg.REST, endpoints, cfg.Clock.Now())
	d.Notes = append(d.Notes, notes...)
	return d, nil
}

// countReachable counts the instances with a client.
func countReachable(clients []*model.Client) int {
	n := 0
	for _, c := range clients {
		if c != nil {
			n++
		}
	}
	return n
}

// takeSamples takes cfg.Samples samples of every instance with a client,
// cfg.Interval apart (the second is the execution trace when one is
// pending), into results. It reports false when ctx ended first.
func takeSamples(ctx context.Context, cfg model.Config, clients []*model.Client, results []model.InstanceResult, target, raw model.Target) bool {
	reachable := countReachable(clients)
	for s := 1; s <= cfg.Samples && reachable > 0; s++ {
		if s == 2 && tracePending(results) {
			traceRound(ctx, cfg, clients, results, target, raw)
			if ctx.Err() != nil {
				return false
			}
			continue
		}
		if s > 1 {
			cfg.Progressf("waiting %s for sample %d/%d%s", cfg.Interval, s, cfg.Samples, english.Paren(cfg.Words.Interval))
			select {
			case <-ctx.Done():
				return false
			case <-cfg.Clock.After(cfg.Interval):
			}
		}
		model.Parallel(ctx, cfg.Parallel, len(clients), func(i int) {
			c := clients[i]
			if c == nil {
				return
			}
			sample, errs := takeSample(ctx, cfg, c, s, &results[i], target)
			results[i].Samples = append(results[i].Samples, sample)
			results[i].Errors = append(results[i].Errors, errs...)
		})
		if ctx.Err() != nil {
			return false
		}
		if s == 1 {
			reachable = dropFailed(cfg, clients, results)
		}
	}
	return true
}

// dropFailed fails fast: an instance whose first sample failed entirely
// is not asked again (its client is cleared); with none left, no interval
// is waited out. It returns how many instances remain.
func dropFailed(cfg model.Config, clients []*model.Client, results []model.InstanceResult) int {
	reachable := 0
	for i, c := range clients {
		if c == nil {
			continue
		}
		if results[i].Failed() {
			clients[i] = nil
			if cfg.Samples > 1 {
				results[i].Notes = append(results[i].Notes, "every fetch of the first sample failed: no further sample taken")
			}
			continue
		}
		reachable++
	}
	return reachable
}

// lockedWriter serializes writes of concurrent instances.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// lockedTarget serializes Store calls of concurrent instances.
type lockedTarget struct {
	mu sync.Mutex
	t  model.Target
}

func (l *lockedTarget) Store(instance string, sample int, kind api.FileKind, body io.Reader) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.t.Store(instance, sample, kind, body)
}
