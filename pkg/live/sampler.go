package live

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/watch-doctor/watch-doctor/pkg/bundle"
	"github.com/watch-doctor/watch-doctor/pkg/metrics"
)

// Paths fetched from each instance (the fixture layout's sources).
var Paths = map[bundle.Kind]string{
	bundle.KindMetrics:         "/metrics",
	bundle.KindGoroutineDebug2: "/debug/pprof/goroutine?debug=2",
	bundle.KindAPFRequests:     "/debug/api_priority_and_fairness/dump_requests?includeRequestDetails=1",
	bundle.KindAPFLevels:       "/debug/api_priority_and_fairness/dump_priority_levels",
	bundle.KindVersion:         "/version",
}

// Target receives what is fetched. Store must consume body before
// returning. Calls come from one goroutine.
type Target interface {
	Store(inst Instance, sample int, kind bundle.Kind, body io.Reader) error
}

// Config is what Run needs; the CLI builds it from flags.
type Config struct {
	REST *rest.Config
	// APIServers, when set, are the instances to read (no discovery).
	APIServers     []string
	Samples        int
	Interval       time.Duration
	RequestTimeout time.Duration
	// MaxGoroutines refuses a debug=2 dump of a server running more
	// goroutines (it stops the world while written) unless Force.
	MaxGoroutines int
	Force         bool
	Clock         clock.Clock
	// Progress receives one line per step; nil for none.
	Progress io.Writer
	// Only, when set, limits the fetches to these kinds (the metrics
	// command reads /metrics alone).
	Only []bundle.Kind
}

func (c Config) wants(k bundle.Kind) bool {
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
	Samples  []bundle.Sample
	Errors   []error
	Notes    []string
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

// maxSmallBody bounds /metrics, APF dumps and /version held in memory.
const maxSmallBody = 256 << 20

// Run discovers the instances, then takes cfg.Samples samples of each,
// cfg.Interval apart, handing every response to target.
func Run(ctx context.Context, cfg Config, target Target) (*Result, error) {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Samples < 1 {
		return nil, fmt.Errorf("invalid Config.Samples %d: at least 1", cfg.Samples)
	}
	disc, err := Discover(ctx, cfg.REST, cfg.APIServers)
	if err != nil {
		return nil, err
	}
	res := &Result{Notes: disc.Notes}
	insts := disc.Instances
	clients := make([]*Client, len(insts))
	results := make([]InstanceResult, len(insts))
	reachable := 0
	for i, inst := range insts {
		results[i].Instance = inst
		c, err := NewClient(cfg.REST, inst, cfg.RequestTimeout, cfg.Clock.Now)
		if err != nil {
			results[i].Errors = append(results[i].Errors, err)
			continue
		}
		if inst.Pinned {
			if err := probe(ctx, c); err != nil {
				results[i].Errors = append(results[i].Errors, fmt.Errorf("%s: not reachable directly: %w", inst.Name, err))
				continue
			}
		}
		clients[i] = c
		reachable++
	}
	if reachable == 0 && len(cfg.APIServers) == 0 && len(insts) > 0 && insts[0].Pinned {
		// Behind a load balancer the instances' own addresses are often
		// unreachable: read through the kubeconfig host and say so.
		fb := fallbackInstance(cfg.REST)
		res.Notes = append(res.Notes, fmt.Sprintf("none of the %d API server instances is reachable directly (%v); reading through the kubeconfig host %s, where a load balancer may answer each request from a different server", len(insts), results[0].Errors[0], fb.Name))
		c, err := NewClient(cfg.REST, fb, cfg.RequestTimeout, cfg.Clock.Now)
		if err != nil {
			return nil, err
		}
		for i := range results {
			res.Notes = append(res.Notes, fmt.Sprintf("instance %s not read directly", results[i].Instance.Name))
		}
		clients, results = []*Client{c}, []InstanceResult{{Instance: fb}}
	}
	for s := 1; s <= cfg.Samples; s++ {
		if s > 1 {
			cfg.progress("waiting %s for sample %d/%d (--interval)", cfg.Interval, s, cfg.Samples)
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-cfg.Clock.After(cfg.Interval):
			}
		}
		for i, c := range clients {
			if c == nil {
				continue
			}
			sample, errs := takeSample(ctx, cfg, c, s, &results[i], target)
			results[i].Samples = append(results[i].Samples, sample)
			results[i].Errors = append(results[i].Errors, errs...)
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
		}
	}
	for i := range results {
		checkSameProcess(&results[i])
	}
	res.Instances = results
	return res, nil
}

func (c Config) progress(format string, args ...any) {
	if c.Progress != nil {
		fmt.Fprintf(c.Progress, format+"\n", args...)
	}
}

// probe checks that an instance answers on its own address. Any HTTP
// answer counts, a refusal included: only the connection matters here.
func probe(ctx context.Context, c *Client) error {
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	r, err := c.Get(pctx, "/version")
	if err != nil {
		var he *HTTPError
		var fe *ForbiddenError
		if errors.As(err, &he) || errors.As(err, &fe) {
			return nil
		}
		return err
	}
	r.Close()
	return nil
}

// takeSample fetches everything of one sample from one instance. Errors of
// single fetches are recorded and returned; the other fetches go on.
func takeSample(ctx context.Context, cfg Config, c *Client, n int, ir *InstanceResult, target Target) (bundle.Sample, []error) {
	inst := c.inst
	dir := fmt.Sprintf("%s/sample-%d", SafeName(inst.Name), n)
	sample := bundle.Sample{Dir: dir, CapturedAt: cfg.Clock.Now().UTC()}
	var errs []error
	fetch := func(kind bundle.Kind, consume func(r io.Reader) error) *bundle.FetchInfo {
		path := Paths[kind]
		fi := bundle.FetchInfo{Kind: kind, Path: path, File: bundle.FileName[kind]}
		resp, err := c.Get(ctx, path)
		if err != nil {
			fi.StartedAt, fi.File, fi.Error = cfg.Clock.Now().UTC(), "", err.Error()
			errs = append(errs, err)
			sample.Fetches = append(sample.Fetches, fi)
			return &sample.Fetches[len(sample.Fetches)-1]
		}
		fi.StartedAt, fi.ServerDate = resp.StartedAt.UTC(), resp.ServerDate
		cr := &countingReader{r: resp.Body}
		err = consume(cr)
		resp.Close()
		fi.Bytes = cr.n
		fi.Duration = cfg.Clock.Since(resp.StartedAt).Round(time.Millisecond).String()
		if err != nil {
			fi.File, fi.Error = "", err.Error()
			errs = append(errs, err)
		}
		sample.Fetches = append(sample.Fetches, fi)
		return &sample.Fetches[len(sample.Fetches)-1]
	}
	store := func(kind bundle.Kind) func(io.Reader) error {
		return func(r io.Reader) error { return target.Store(inst, n, kind, r) }
	}
	// /metrics first: the goroutine count guards the debug=2 dump.
	var goroutines, start float64 = math.NaN(), math.NaN()
	var mfi *bundle.FetchInfo
	mfi = fetch(bundle.KindMetrics, func(r io.Reader) error {
		b, err := io.ReadAll(io.LimitReader(r, maxSmallBody))
		if err != nil {
			return fmt.Errorf("%s: reading /metrics: %w", inst.Name, err)
		}
		if s, err := metrics.Parse(bytes.NewReader(b), inst.Name+"/metrics"); err == nil {
			snap := metrics.Extract(s)
			goroutines, start = snap.Goroutines, snap.ProcessStartTime
		}
		return target.Store(inst, n, bundle.KindMetrics, bytes.NewReader(b))
	})
	if !math.IsNaN(start) {
		mfi.ProcessStartTime = start
	}
	if mfi.Error == "" {
		sample.CapturedAt = mfi.StartedAt
		if mfi.ServerDate != nil {
			sample.CapturedAt = *mfi.ServerDate
		}
	}
	desc := "unknown"
	if !math.IsNaN(goroutines) {
		desc = fmt.Sprintf("%.0f", goroutines)
	}
	switch {
	case !cfg.wants(bundle.KindGoroutineDebug2):
	case cfg.MaxGoroutines > 0 && !cfg.Force && (math.IsNaN(goroutines) || goroutines > float64(cfg.MaxGoroutines)):
		var err error
		switch {
		case mfi.Error != "":
			// The server may be down or sick: no stop-the-world dump.
			err = fmt.Errorf("%s: /metrics failed, so go_goroutines is unknown and the goroutine dump (which stops the world in the API server while it is written) was not attempted: fix /metrics first (see its error)", inst.Name)
		case math.IsNaN(goroutines):
			err = fmt.Errorf("%s: go_goroutines could not be read from /metrics, so the goroutine dump (which stops the world in the API server while it is written) cannot be checked against --max-goroutines %d: pass --force to take it anyway", inst.Name, cfg.MaxGoroutines)
		default:
			err = fmt.Errorf("%s: go_goroutines is %.0f, above --max-goroutines %d: a debug=2 dump stops the world in the API server while it is written; pass --force to take it anyway", inst.Name, goroutines, cfg.MaxGoroutines)
		}
		errs = append(errs, err)
		sample.Fetches = append(sample.Fetches, bundle.FetchInfo{Kind: bundle.KindGoroutineDebug2, Path: Paths[bundle.KindGoroutineDebug2], StartedAt: cfg.Clock.Now().UTC(), Error: err.Error()})
	default:
		cfg.progress("sample %d/%d: %s: goroutine dump (go_goroutines %s)", n, cfg.Samples, inst.Name, desc)
		gfi := fetch(bundle.KindGoroutineDebug2, store(bundle.KindGoroutineDebug2))
		if gfi.Error == "" {
			at := gfi.StartedAt
			if gfi.ServerDate != nil {
				at = *gfi.ServerDate
			}
			sample.CapturedAt = at
		}
	}
	for _, kind := range []bundle.Kind{bundle.KindAPFRequests, bundle.KindAPFLevels} {
		if cfg.wants(kind) {
			fetch(kind, store(kind))
		}
	}
	if ir.Version == "" && cfg.wants(bundle.KindVersion) {
		fetch(bundle.KindVersion, func(r io.Reader) error {
			b, err := io.ReadAll(io.LimitReader(r, 1<<20))
			if err != nil {
				return err
			}
			var v struct {
				GitVersion string `json:"gitVersion"`
			}
			if err := json.Unmarshal(b, &v); err != nil {
				return fmt.Errorf("%s: decoding /version: %w", inst.Name, err)
			}
			ir.Version = v.GitVersion
			return target.Store(inst, n, bundle.KindVersion, bytes.NewReader(b))
		})
	}
	if !inst.Pinned && len(cfg.Only) == 0 {
		// Through a load balancer: read the process start time again to see
		// whether this sample's fetches all reached one process.
		var again float64 = math.NaN()
		if resp, err := c.Get(ctx, Paths[bundle.KindMetrics]); err == nil {
			if s, err := metrics.Parse(resp.Body, inst.Name+"/metrics"); err == nil {
				again = metrics.Extract(s).ProcessStartTime
			}
			resp.Close()
		}
		if !math.IsNaN(start) && !math.IsNaN(again) && start != again {
			note := fmt.Sprintf("sample %d reached different API server processes (process_start_time_seconds %.0f, then %.0f): through the load balancer its goroutine dump and APF dump may come from different servers; pin instances with --apiserver", n, start, again)
			ir.Notes = append(ir.Notes, note)
			sample.Mixed = note
			cfg.progress("%s: %s", inst.Name, note)
		}
	}
	cfg.progress("sample %d/%d: %s: done (%d errors)", n, cfg.Samples, inst.Name, len(errs))
	return sample, errs
}

// checkSameProcess compares the process start times of an instance's
// samples: a restart between samples makes them different processes.
func checkSameProcess(ir *InstanceResult) {
	var first float64
	for i, s := range ir.Samples {
		for _, f := range s.Fetches {
			if f.Kind != bundle.KindMetrics || f.ProcessStartTime == 0 {
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

// SafeName turns an instance name into a directory name (no ':' or '/').
func SafeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch c {
		case ':', '/', '\\', '[', ']', '%', '*', '?', '"', '<', '>', '|':
			b[i] = '_'
		}
	}
	return string(b)
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
