package live

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/watch-doctor/watch-doctor/internal/bundle"
	"github.com/watch-doctor/watch-doctor/internal/watches"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/metrics"
)

// pathOf is the path, with its query, fetched from each instance for a
// kind (bundle.Kinds, the one table of the input kinds).
func pathOf(k api.FileKind) string { return bundle.Path(k) }

// Target receives what is fetched. Store must consume body before
// returning. Run serializes the calls (instances are read concurrently).
type Target interface {
	Store(instance string, sample int, kind api.FileKind, body io.Reader) error
}

// Config is what Run needs; the CLI builds it from flags.
type Config struct {
	REST *rest.Config
	// APIServers, when set, are the instances to read, as HOST:PORT (no
	// discovery).
	APIServers     []string
	Samples        int
	Interval       time.Duration
	RequestTimeout time.Duration
	// MaxPause is the pause budget of a debug=2 dump: it stops the world
	// in the API server while it is written, so it is taken only when the
	// pause estimated from the cheap look (see Estimate) is within it,
	// unless Force. 0 means no budget.
	MaxPause time.Duration
	// MaxGoroutines (deprecated by MaxPause) also refuses a debug=2 dump
	// of a server running more goroutines, unless Force; 0 means no limit.
	MaxGoroutines int
	// Force takes the debug=2 dump whatever the cheap look and the budget
	// say.
	Force bool
	// Parallel bounds the instances read at once; 0 means 4.
	Parallel int
	// ProgressEvery is how often a fetch still waiting is reported on
	// Progress; 0 means 5 s.
	ProgressEvery time.Duration
	Clock         clock.Clock
	// Progress receives one line per step; nil for none.
	Progress io.Writer
	// Only, when set, limits the fetches to these kinds (the metrics
	// command reads /metrics alone).
	Only []api.FileKind
	// Hints name the settings that progress lines, notes and errors
	// point at.
	Hints Hints
	// Trace chooses the evidence between the samples and bounds the
	// execution trace (trace.go).
	Trace TraceConfig
}

// Hints name, in the caller's words, how a user changes a setting of
// Config (the CLI: its flags). An empty hint is left out of the message.
type Hints struct {
	// APIServers pins the instances (Config.APIServers).
	APIServers string
	// Interval sets Config.Interval.
	Interval string
	// RequestTimeout sets Config.RequestTimeout.
	RequestTimeout string
	// MaxPause, Evidence and TraceBudget set Config.MaxPause,
	// Config.Trace.Evidence and Config.Trace.Budget.
	MaxPause, Evidence, TraceBudget string
}

// paren returns " (hint)", or "" for no hint.
func paren(hint string) string {
	if hint == "" {
		return ""
	}
	return " (" + hint + ")"
}

func (c Config) wants(k api.FileKind) bool {
	if len(c.Only) == 0 {
		return true
	}
	for _, o := range c.Only {
		if o == k {
			return true
		}
	}
	return false
}

// Result is what Run did, per instance.
type Result struct {
	Instances []InstanceResult
	Notes     []string
}

// InstanceResult is the record of one instance: its samples (the manifest
// of a bundle) and its errors.
type InstanceResult struct {
	Instance Instance
	Version  string
	// GoVersion is /version's goVersion ("go1.26.8"): an execution trace
	// needs Go 1.22 or later.
	GoVersion string
	Samples   []api.Sample
	Errors    []error
	Notes     []string
	// Withheld are the debug=2 dumps not taken because their estimated
	// pause exceeded Config.MaxPause, one per sample concerned.
	Withheld []*PauseBudgetError
	// Cost is what the run cost the instance (see finishCost); nil when
	// it was not measured (the metrics command, an instance never read).
	Cost *api.ServerCost
	// Trace is the execution trace taken between the samples, nil when
	// none was attempted.
	Trace *TraceResult

	cost costMeter
	// dumpEvidence is why the debug=2 dump was chosen over a trace.
	dumpEvidence string
}

// Failed reports whether nothing at all could be read.
func (r InstanceResult) Failed() bool {
	for _, s := range r.Samples {
		for _, f := range s.Fetches {
			if f.Error == "" {
				return false
			}
		}
	}
	return true
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
// estimated pause is within cfg.MaxPause (see decideDump).
//
// Run fails fast: an instance that times out or refuses a connection is
// not asked again, and when every instance failed its first sample the
// interval is not waited out. When ctx ends after discovery, Run returns
// what was read so far with ctx's error.
func Run(ctx context.Context, cfg Config, target Target) (*Result, error) {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Samples < 1 {
		return nil, fmt.Errorf("invalid Config.Samples %d: at least 1", cfg.Samples)
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
	raw := target
	target = &lockedTarget{t: target}
	dctx, dcancel := ctx, context.CancelFunc(func() {})
	if cfg.RequestTimeout > 0 {
		dctx, dcancel = context.WithTimeout(ctx, cfg.RequestTimeout)
	}
	disc, err := discover(dctx, cfg.REST, cfg.APIServers)
	dcancel()
	if err != nil {
		return nil, err
	}
	res := &Result{Notes: disc.Notes}
	insts := disc.Instances
	clients := make([]*client, len(insts))
	results := make([]InstanceResult, len(insts))
	// partial is what was read when ctx ended, with ctx's error: a
	// collect interrupted by Ctrl-C still writes a valid bundle of it.
	partial := func() (*Result, error) {
		res.Instances = results
		return res, ctx.Err()
	}
	reachable := 0
	cfg.probeAll(ctx, insts, results, clients)
	if ctx.Err() != nil {
		return partial()
	}
	for _, c := range clients {
		if c != nil {
			reachable++
		}
	}
	if reachable == 0 && len(cfg.APIServers) == 0 && len(insts) > 0 && insts[0].Pinned {
		// Behind a load balancer the instances' own addresses are often
		// unreachable: read through the kubeconfig host and say so.
		fb := fallbackInstance(cfg.REST)
		res.Notes = append(res.Notes, fmt.Sprintf("none of the %d API server instances is reachable directly (%v); reading through the kubeconfig host %s, where a load balancer may answer each request from a different server", len(insts), results[0].Errors[0], fb.Name))
		c, err := cfg.clientFor(fb)
		if err != nil {
			return nil, err
		}
		for i := range results {
			res.Notes = append(res.Notes, fmt.Sprintf("instance %s not read directly", results[i].Instance.Name))
		}
		clients, results = []*client{c}, []InstanceResult{{Instance: fb}}
		reachable = 1
	}
	for s := 1; s <= cfg.Samples && reachable > 0; s++ {
		if s == 2 && tracePending(results) {
			traceRound(ctx, cfg, clients, results, target, raw)
			if ctx.Err() != nil {
				return partial()
			}
			continue
		}
		if s > 1 {
			cfg.progress("waiting %s for sample %d/%d%s", cfg.Interval, s, cfg.Samples, paren(cfg.Hints.Interval))
			select {
			case <-ctx.Done():
				return partial()
			case <-cfg.Clock.After(cfg.Interval):
			}
		}
		parallel(ctx, cfg.Parallel, len(clients), func(i int) {
			c := clients[i]
			if c == nil {
				return
			}
			sample, errs := takeSample(ctx, cfg, c, s, &results[i], target)
			results[i].Samples = append(results[i].Samples, sample)
			results[i].Errors = append(results[i].Errors, errs...)
		})
		if ctx.Err() != nil {
			return partial()
		}
		// Fail fast: an instance whose first sample failed entirely is
		// not asked again; with none left, no interval is waited out.
		if s == 1 {
			reachable = 0
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
		}
	}
	finishCosts(ctx, cfg, clients, results)
	for i := range results {
		checkSameProcess(&results[i])
	}
	res.Instances = results
	return res, nil
}

// parallel runs f(0..n-1) with at most limit at once and returns when all
// have returned. Calls not yet started when ctx ends are skipped.
func parallel(ctx context.Context, limit, n int, f func(i int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, limit)
	for i := 0; i < n; i++ {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return
		}
		wg.Add(1)
		go func(i int) {
			defer func() { <-sem; wg.Done() }()
			f(i)
		}(i)
	}
	wg.Wait()
}

// clientFor is newClient with the config's timeout and its hint.
func (c Config) clientFor(inst Instance) (*client, error) {
	cl, err := newClient(c.REST, inst, c.RequestTimeout, c.Clock.Now)
	if cl != nil {
		cl.timeoutHint = c.Hints.RequestTimeout
	}
	return cl, err
}

func (c Config) progress(format string, args ...any) {
	if c.Progress != nil {
		fmt.Fprintf(c.Progress, format+"\n", args...)
	}
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
	t  Target
}

func (l *lockedTarget) Store(instance string, sample int, kind api.FileKind, body io.Reader) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.t.Store(instance, sample, kind, body)
}

// probeTimeout bounds the reachability probe of a pinned instance (at
// most the request timeout).
const probeTimeout = 10 * time.Second

// probe checks that an instance answers on its own address. Any HTTP
// answer counts, a refusal included: only the connection matters here.
func probe(ctx context.Context, c *client, requestTimeout time.Duration) error {
	d := probeTimeout
	if requestTimeout > 0 && requestTimeout < d {
		d = requestTimeout
	}
	pctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	r, err := c.Get(pctx, "/version")
	if err != nil {
		var he *HTTPError
		var fe *ForbiddenError
		var pe *ProfilingDisabledError
		if errors.As(err, &he) || errors.As(err, &fe) || errors.As(err, &pe) {
			return nil
		}
		if errors.Is(pctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			return fmt.Errorf("no answer within %s", d)
		}
		return err
	}
	r.Close()
	return nil
}

// unreachable reports whether err means the instance itself did not
// answer (a connection refused or reset, a timeout), as opposed to an
// HTTP error status: the other fetches of the sample would fail alike.
func unreachable(err error) bool {
	var he *HTTPError
	var fe *ForbiddenError
	var pe *ProfilingDisabledError
	return err != nil && !errors.As(err, &he) && !errors.As(err, &fe) && !errors.As(err, &pe) && !refusedByGuard(err)
}

// sampler takes one sample of one instance; takeSample runs its steps in
// order. Not safe for concurrent use.
type sampler struct {
	ctx    context.Context
	cfg    Config
	c      *client
	n      int
	target Target
	sample api.Sample
	errs   []error
	// down is set once the instance did not answer: the remaining
	// fetches of the sample are skipped.
	down error
	// ir is the instance's record: its version, notes and withheld dumps.
	ir *InstanceResult
	// look is what the cheap look read, for decideDump.
	look cheapLook
	// debug1 is the debug=1 profile, stored after the decision.
	debug1 []byte
}

// fetch GETs kind's path and hands the body to consume, recording the
// fetch in the sample. While the server has not answered, a progress
// line says every cfg.ProgressEvery which instance and fetch it waits on.
func (sp *sampler) fetch(kind api.FileKind, consume func(r io.Reader) error) *api.FetchInfo {
	cfg, inst := sp.cfg, sp.c.inst
	path := pathOf(kind)
	fi := api.FetchInfo{Kind: kind, Path: path, File: bundle.FileName(kind)}
	if sp.down != nil {
		err := fmt.Errorf("%s: GET %s: not attempted: the instance did not answer an earlier request of this sample", inst.Name, path)
		fi.StartedAt, fi.File, fi.Error = cfg.Clock.Now().UTC(), "", err.Error()
		sp.sample.Fetches = append(sp.sample.Fetches, fi)
		return &sp.sample.Fetches[len(sp.sample.Fetches)-1]
	}
	stop := sp.watchdog(path)
	resp, err := sp.c.Get(sp.ctx, path)
	if err != nil {
		stop()
		fi.StartedAt, fi.File, fi.Error = cfg.Clock.Now().UTC(), "", err.Error()
		sp.errs = append(sp.errs, err)
		if unreachable(err) {
			sp.down = err
		}
		sp.sample.Fetches = append(sp.sample.Fetches, fi)
		return &sp.sample.Fetches[len(sp.sample.Fetches)-1]
	}
	fi.StartedAt, fi.ServerDate = resp.StartedAt.UTC(), resp.ServerDate
	cr := &countingReader{r: resp.Body}
	err = consume(cr)
	stop()
	resp.Close()
	fi.Bytes = cr.n
	fi.Duration = cfg.Clock.Since(resp.StartedAt).Round(time.Millisecond).String()
	if err != nil {
		if g := tooLarge(err); g != nil {
			err = g // the server's answer failed, not the target
		}
		fi.File, fi.Error = "", err.Error()
		sp.errs = append(sp.errs, err)
		var se *storeError
		if unreachable(err) && !errors.As(err, &se) {
			sp.down = err
		}
	}
	sp.sample.Fetches = append(sp.sample.Fetches, fi)
	return &sp.sample.Fetches[len(sp.sample.Fetches)-1]
}

// storeError is a failure of the target (a parse error, a full disk), not
// of the server.
type storeError struct{ err error }

func (e *storeError) Error() string { return e.err.Error() }
func (e *storeError) Unwrap() error { return e.err }

// watchdog prints a progress line every cfg.ProgressEvery until the
// returned stop is called.
func (sp *sampler) watchdog(path string) (stop func()) {
	started := sp.cfg.Clock.Now()
	timeoutName := sp.cfg.Hints.RequestTimeout
	if timeoutName == "" {
		timeoutName = "request timeout"
	}
	// The first timer is set before the request is sent, so a (fake)
	// clock stepped once the request arrived fires it.
	return sp.cfg.every(func() {
		sp.cfg.progress("sample %d/%d: %s: GET %s: no complete answer yet, waiting %s so far (%s %s)", sp.n, sp.cfg.Samples, sp.c.inst.Name, path, sp.cfg.Clock.Since(started).Round(time.Second), timeoutName, sp.cfg.RequestTimeout)
	})
}

func (sp *sampler) store(kind api.FileKind) func(io.Reader) error {
	return func(r io.Reader) error {
		if err := sp.target.Store(sp.c.inst.Name, sp.n, kind, r); err != nil {
			return &storeError{err}
		}
		return nil
	}
}

// takeSample fetches everything of one sample from one instance: the cheap
// look first, then the debug=2 dump when decideDump allows it. Errors of
// single fetches are recorded and returned; the other fetches go on unless
// the instance stopped answering.
func takeSample(ctx context.Context, cfg Config, c *client, n int, ir *InstanceResult, target Target) (api.Sample, []error) {
	sp := &sampler{ctx: ctx, cfg: cfg, c: c, n: n, target: target, ir: ir}
	sp.sample = api.Sample{Dir: bundle.SampleDir(c.inst.Name, n), CapturedAt: cfg.Clock.Now().UTC()}
	sp.look.goroutines, sp.look.start = math.NaN(), math.NaN()
	sp.readMetrics()
	sp.readAPF()
	sp.readProfile()
	sp.look.at = sp.sample.CapturedAt
	sp.gatherEvidence()
	sp.storeProfile()
	sp.readVersion()
	sp.checkOneProcess()
	cfg.progress("sample %d/%d: %s: %s", n, cfg.Samples, c.inst.Name, sampleEnd(ctx, sp.errs))
	return sp.sample, sp.errs
}

// readMetrics fetches /metrics first: go_goroutines, the process start
// time and, from its Date header, the server's clock for APF ages.
func (sp *sampler) readMetrics() {
	inst := sp.c.inst
	mfi := sp.fetch(api.FileMetrics, func(r io.Reader) error {
		b, err := readMetricsText(r, inst.Name)
		if err != nil {
			return err
		}
		if s, err := metrics.Parse(bytes.NewReader(b), inst.Name+"/metrics"); err == nil {
			snap := metrics.Extract(s)
			sp.look.goroutines, sp.look.start = snap.Goroutines, snap.ProcessStartTime
			sp.look.buildVersion = snap.Version.GitVersion
			sp.ir.cost.notePauses(s)
		}
		return sp.store(api.FileMetrics)(bytes.NewReader(b))
	})
	if !math.IsNaN(sp.look.start) {
		mfi.ProcessStartTime = sp.look.start
	}
	if mfi.Error == "" {
		sp.sample.CapturedAt = mfi.StartedAt
		if mfi.ServerDate != nil {
			sp.sample.CapturedAt = *mfi.ServerDate
		}
	}
}

// readAPF fetches the APF dumps: every watch still initializing is an
// executing request, with its start time, user, resource and seats.
func (sp *sampler) readAPF() {
	if sp.cfg.wants(api.FileAPFRequests) {
		sp.fetch(api.FileAPFRequests, func(r io.Reader) error {
			b, err := readAll(r, sp.c.inst.Name+": reading APF dump_requests")
			if err != nil {
				return err
			}
			if rq, err := apf.ParseRequests(bytes.NewReader(b)); err == nil {
				sp.look.requests = rq
			}
			return sp.store(api.FileAPFRequests)(bytes.NewReader(b))
		})
	}
	if sp.cfg.wants(api.FileAPFLevels) {
		sp.fetch(api.FileAPFLevels, sp.store(api.FileAPFLevels))
	}
}

// readProfile fetches the debug=1 profile: goroutines counted per stack,
// for the initial-phase watchers and the size of a debug=2 dump. It is
// stored after the decision (storeProfile), so that a debug=2 dump of the
// same sample is read first. Only naming FileGoroutineDebug1 without
// FileGoroutineDebug2 reads the profile and never the debug=2 dump (the
// look of serve).
func (sp *sampler) readProfile() {
	if !sp.cfg.wants(api.FileGoroutineDebug2) && !sp.cfg.wants(api.FileGoroutineDebug1) {
		return
	}
	sp.fetch(api.FileGoroutineDebug1, func(r io.Reader) error {
		b, err := readAll(r, sp.c.inst.Name+": reading the debug=1 goroutine profile")
		if err != nil {
			return err
		}
		if a, _, err := watches.ReadProfile(bytes.NewReader(b), watches.FormatDebug1); err == nil {
			sp.look.profile = a
		}
		sp.debug1 = b
		return nil
	})
}

// dumpIfNeeded takes the debug=2 dump when decideDump allows it, and
// records why not otherwise.
func (sp *sampler) dumpIfNeeded() {
	cfg, inst, n := sp.cfg, sp.c.inst, sp.n
	if !cfg.wants(api.FileGoroutineDebug2) || sp.down != nil {
		return
	}
	take, why, withheld, err := decideDump(cfg, inst.Name, sp.look)
	switch {
	case err != nil:
		sp.errs = append(sp.errs, err)
		sp.sample.Fetches = append(sp.sample.Fetches, api.FetchInfo{Kind: api.FileGoroutineDebug2, Path: pathOf(api.FileGoroutineDebug2), StartedAt: cfg.Clock.Now().UTC(), Error: err.Error()})
	case take:
		cfg.progress("sample %d/%d: %s: goroutine dump (go_goroutines %.0f; %s)", n, cfg.Samples, inst.Name, sp.look.goroutines, why)
		gfi := sp.fetch(api.FileGoroutineDebug2, sp.store(api.FileGoroutineDebug2))
		if gfi.Error == "" {
			at := gfi.StartedAt
			if gfi.ServerDate != nil {
				at = *gfi.ServerDate
			}
			sp.sample.CapturedAt = at
		}
	case withheld != nil:
		cfg.progress("sample %d/%d: %s", n, cfg.Samples, withheld)
		sp.ir.Withheld = append(sp.ir.Withheld, withheld)
		sp.sample.Withheld = withheld.Cost()
	default:
		cfg.progress("sample %d/%d: %s: no goroutine dump needed: %s", n, cfg.Samples, inst.Name, why)
		sp.sample.Notes = append(sp.sample.Notes, "no goroutine dump needed: "+why)
	}
}

// storeProfile hands the debug=1 profile read by readProfile to the
// target.
func (sp *sampler) storeProfile() {
	if sp.debug1 == nil {
		return
	}
	if err := sp.store(api.FileGoroutineDebug1)(bytes.NewReader(sp.debug1)); err != nil {
		sp.errs = append(sp.errs, err)
	}
}

// readVersion fetches /version once per instance.
func (sp *sampler) readVersion() {
	ir := sp.ir
	if ir.Version != "" || !sp.cfg.wants(api.FileVersion) {
		return
	}
	sp.fetch(api.FileVersion, func(r io.Reader) error {
		b, err := readAll(r, sp.c.inst.Name+": reading /version")
		if err != nil {
			return err
		}
		var v struct {
			GitVersion string `json:"gitVersion"`
			GoVersion  string `json:"goVersion"`
		}
		if err := json.Unmarshal(b, &v); err != nil {
			return fmt.Errorf("%s: decoding /version: %w", sp.c.inst.Name, err)
		}
		ir.Version, ir.GoVersion = v.GitVersion, v.GoVersion
		if c := versionContradiction(v.GitVersion, sp.look.buildVersion, sp.look.profile); c != "" {
			ir.Notes = append(ir.Notes, c)
		}
		return sp.store(api.FileVersion)(bytes.NewReader(b))
	})
}

// checkOneProcess, through a load balancer, reads the process start time
// again to see whether this sample's fetches all reached one process.
func (sp *sampler) checkOneProcess() {
	cfg, inst, n := sp.cfg, sp.c.inst, sp.n
	if inst.Pinned || len(cfg.Only) != 0 || sp.down != nil {
		return
	}
	var again float64 = math.NaN()
	if resp, err := sp.c.Get(sp.ctx, pathOf(api.FileMetrics)); err == nil {
		if s, err := metrics.Parse(resp.Body, inst.Name+"/metrics"); err == nil {
			again = metrics.Extract(s).ProcessStartTime
		}
		resp.Close()
	}
	if !math.IsNaN(sp.look.start) && !math.IsNaN(again) && sp.look.start != again {
		note := fmt.Sprintf("sample %d reached different API server processes (process_start_time_seconds %.0f, then %.0f): through the load balancer its goroutine dump and APF dump may come from different servers", n, sp.look.start, again)
		if cfg.Hints.APIServers != "" {
			note += "; pin instances with " + cfg.Hints.APIServers
		}
		sp.ir.Notes = append(sp.ir.Notes, note)
		sp.sample.Mixed = note
		cfg.progress("%s: %s", inst.Name, note)
	}
}

// checkSameProcess compares the process start times of an instance's
// samples: a restart between samples makes them different processes.
func checkSameProcess(ir *InstanceResult) {
	var first float64
	for i, s := range ir.Samples {
		for _, f := range s.Fetches {
			if f.Kind != api.FileMetrics || f.ProcessStartTime == 0 {
				continue
			}
			if first == 0 {
				first = f.ProcessStartTime
			} else if f.ProcessStartTime != first {
				ir.Notes = append(ir.Notes, fmt.Sprintf("sample %d came from a different process than sample 1 (process_start_time_seconds %.0f, then %.0f): the API server restarted, or a load balancer switched servers; samples are not compared", i+1, first, f.ProcessStartTime))
			}
		}
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
