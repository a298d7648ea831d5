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

	"github.com/watch-doctor/watch-doctor/internal/bundle"
	"github.com/watch-doctor/watch-doctor/internal/watches"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/metrics"
)

// pathOf is the path, with its query, fetched from each instance for a
// kind (bundle.Kinds, the one table of the input kinds).
func pathOf(k api.FileKind) string { return bundle.Path(k) }

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
		if st := ProfileRefusal(err); st != 0 {
			sp.sample.ProfileStatus = st
		}
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
	if err := cfg.sameProcess(ctx, c, ir, n > 1); err != nil {
		sp.down = err
		sp.errs = append(sp.errs, err)
	}
	sp.readMetrics()
	sp.checkOwnProcess()
	sp.readAPF()
	sp.readProfile()
	sp.look.at = sp.sample.CapturedAt
	sp.look.horizon = time.Duration(max(0, cfg.Samples-n)) * cfg.Interval
	sp.gatherEvidence()
	sp.storeProfile()
	sp.readVersion()
	sp.checkOneProcess()
	cfg.progress("sample %d/%d: %s: %s", n, cfg.Samples, c.inst.Name, sampleEnd(ctx, sp.errs))
	return sp.sample, sp.errs
}

// lookFamilies are the families of /metrics the cheap look reads: the
// goroutines, the process start time, the build's version (Extract's
// Goroutines, ProcessStartTime and Version.GitVersion) and the pause
// histogram (cost.go). The target parses the rest, once.
var lookFamilies = []string{"go_goroutines", "process_start_time_seconds", "kubernetes_build_info", metrics.SchedPausesOther, metrics.SchedPausesStoppingOther}

// startFamily is the family of the process start time, all that a check
// of which process answered reads of /metrics.
var startFamily = []string{"process_start_time_seconds"}

// readMetrics fetches /metrics first: go_goroutines, the process start
// time and, from its Date header, the server's clock for APF ages.
func (sp *sampler) readMetrics() {
	inst := sp.c.inst
	mfi := sp.fetch(api.FileMetrics, func(r io.Reader) error {
		b, err := readMetricsText(r, inst.Name)
		if err != nil {
			return err
		}
		if s, err := (metrics.Parser{Families: lookFamilies}).Parse(bytes.NewReader(b), inst.Name+"/metrics"); err == nil {
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
		cfg.progress("sample %d/%d: %s: goroutine dump (%s; %s)", n, cfg.Samples, inst.Name, goroutinesText(sp.look.goroutines), why)
		ctx := sp.ctx
		sp.ctx = withDumpPermit(ctx, estimateOf(sp.look))
		gfi := sp.fetch(api.FileGoroutineDebug2, sp.store(api.FileGoroutineDebug2))
		sp.ctx = ctx
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
		if s, err := (metrics.Parser{Families: startFamily}).Parse(resp.Body, inst.Name+"/metrics"); err == nil {
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
