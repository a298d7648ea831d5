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
	"github.com/watch-doctor/watch-doctor/internal/live/discovery"
	"github.com/watch-doctor/watch-doctor/internal/live/harm"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	"github.com/watch-doctor/watch-doctor/internal/watches"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/metrics"
)

// sampler takes one sample of one instance; takeSample runs its steps in
// order. Not safe for concurrent use.
type sampler struct {
	ctx    context.Context
	cfg    model.Config
	c      *model.Client
	n      int
	target model.Target
	sample api.Sample
	errs   []error
	// down is set once the instance did not answer: the remaining
	// fetches of the sample are skipped.
	down error
	// ir is the instance's record: its version, notes and withheld dumps.
	ir *model.InstanceResult
	// look is what the cheap look read, for harm.DecideDump and
	// harm.CheapAnswer (gatherEvidence).
	look harm.CheapLook
	// debug1 is the debug=1 profile, stored after the decision.
	debug1 []byte
	// elsewhere is set when the sample reached a process another
	// connection samples (checkSampledElsewhere): no dump or trace.
	elsewhere bool
	// pin is the process the sample's identity probes must find, agreed
	// how many reads named it, idless the fetches without identity,
	// probes and probeBytes the probes made, dials the connection's dials
	// at the sample's start (pin.go).
	pin                    float64
	agreed, idless, probes int
	probeBytes, dials      int64
	// gauge is the executing-requests gauge of the sample's /metrics, and
	// tie what the content tie of its APF requests dump found (tie.go).
	gauge executingGauge
	tie   string
}

// fetch GETs kind's path and hands the body to consume, recording the
// fetch in the sample. While the server has not answered, a progress
// line says every cfg.ProgressEvery which instance and fetch it waits on.
func (sp *sampler) fetch(kind api.FileKind, consume func(r io.Reader) error) *api.FetchInfo {
	cfg, inst := sp.cfg, sp.c.Inst
	path := model.PathOf(kind)
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
		if st := model.ProfileRefusal(err); st != 0 {
			sp.sample.ProfileStatus = st
		}
		if unreachable(err) {
			sp.down = err
		}
		sp.sample.Fetches = append(sp.sample.Fetches, fi)
		return &sp.sample.Fetches[len(sp.sample.Fetches)-1]
	}
	fi.StartedAt, fi.ServerDate = resp.StartedAt.UTC(), resp.ServerDate
	cr := &model.CountingReader{R: resp.Body}
	err = consume(cr)
	stop()
	resp.Close()
	fi.Bytes = cr.N
	fi.Duration = cfg.Clock.Since(resp.StartedAt).Round(time.Millisecond).String()
	if err != nil {
		if g := model.TooLarge(err); g != nil {
			err = g // the server's answer failed, not the target
		}
		fi.File, fi.Error = "", err.Error()
		sp.errs = append(sp.errs, err)
		var se *model.StoreError
		if unreachable(err) && !errors.As(err, &se) {
			sp.down = err
		}
	}
	sp.sample.Fetches = append(sp.sample.Fetches, fi)
	sp.probeAfter(kind)
	return &sp.sample.Fetches[len(sp.sample.Fetches)-1]
}

// watchdog prints a progress line every cfg.ProgressEvery until the
// returned stop is called.
func (sp *sampler) watchdog(path string) (stop func()) {
	started := sp.cfg.Clock.Now()
	timeoutName := sp.cfg.Words.RequestTimeout
	if timeoutName == "" {
		timeoutName = "request timeout"
	}
	// The first timer is set before the request is sent, so a (fake)
	// clock stepped once the request arrived fires it.
	return every(sp.cfg, func() {
		sp.cfg.Progressf("sample %d/%d: %s: GET %s: no complete answer yet, waiting %s so far (%s %s)", sp.n, sp.cfg.Samples, sp.c.Inst.Name, path, sp.cfg.Clock.Since(started).Round(time.Second), timeoutName, sp.cfg.RequestTimeout)
	})
}

func (sp *sampler) store(kind api.FileKind) func(io.Reader) error {
	return func(r io.Reader) error {
		if err := sp.target.Store(sp.c.Inst.Name, sp.n, kind, r); err != nil {
			return &model.StoreError{Err: err}
		}
		return nil
	}
}

// takeSample fetches everything of one sample from one instance: the cheap
// look first (/metrics, the APF dumps, the debug=1 profile), then the
// evidence gatherEvidence chooses: the debug=2 dump as harm.DecideDump
// allows it, or, in sample 1, an execution trace of the interval instead.
// Errors of single fetches are recorded and returned; the other fetches go
// on unless the instance stopped answering.
func takeSample(ctx context.Context, cfg model.Config, c *model.Client, n int, ir *model.InstanceResult, target model.Target) (api.Sample, []error) {
	sp := &sampler{ctx: ctx, cfg: cfg, c: c, n: n, target: target, ir: ir}
	sp.sample = api.Sample{Dir: bundle.SampleDir(c.Inst.Name, n), CapturedAt: cfg.Clock.Now().UTC()}
	sp.look.Goroutines, sp.look.Start = math.NaN(), math.NaN()
	if err := discovery.SameProcess(ctx, cfg, c, ir, n > 1); err != nil {
		sp.down = err
		sp.errs = append(sp.errs, err)
	}
	sp.readMetrics()
	sp.checkOwnProcess()
	sp.checkSampledElsewhere()
	sp.startPin()
	sp.readAPF()
	sp.readProfile()
	sp.look.At = sp.sample.CapturedAt
	sp.look.Horizon = time.Duration(max(0, cfg.Samples-n)) * cfg.Interval
	sp.gatherEvidence()
	sp.storeProfile()
	sp.readVersion()
	sp.checkPinned()
	cfg.Progressf("sample %d/%d: %s: %s", n, cfg.Samples, c.Inst.Name, sampleEnd(ctx, sp.errs))
	return sp.sample, sp.errs
}

// lookFamilies are the families of /metrics the cheap look reads: the
// goroutines, the process start time, the build's version (Extract's
// Goroutines, ProcessStartTime and Version.GitVersion), the pause
// histogram (harm/cost.go) and the executing APF requests (tie.go). The
// target parses the rest, once.
var lookFamilies = []string{"go_goroutines", "process_start_time_seconds", "kubernetes_build_info", metrics.SchedPausesOther, metrics.SchedPausesStoppingOther, executingGaugeFamily}

// readMetrics fetches /metrics first: go_goroutines, the process start
// time and, from its Date header, the server's clock for APF ages.
func (sp *sampler) readMetrics() {
	inst := sp.c.Inst
	var snap *metrics.Snapshot
	mfi := sp.fetch(api.FileMetrics, func(r io.Reader) error {
		b, err := model.ReadMetricsText(r, inst.Name)
		if err != nil {
			return err
		}
		if s, err := (metrics.Parser{Families: lookFamilies}).Parse(bytes.NewReader(b), inst.Name+"/metrics"); err == nil {
			snap = metrics.Extract(s)
			sp.look.Goroutines, sp.look.Start = snap.Goroutines, snap.ProcessStartTime
			sp.look.BuildVersion = snap.Version.GitVersion
			sp.ir.Meter.NotePauses(s)
		}
		return sp.store(api.FileMetrics)(bytes.NewReader(b))
	})
	if !math.IsNaN(sp.look.Start) {
		mfi.ProcessStartTime = sp.look.Start
	}
	if mfi.Error == "" {
		sp.sample.CapturedAt = mfi.StartedAt
		if mfi.ServerDate != nil {
			sp.sample.CapturedAt = *mfi.ServerDate
		}
	}
	sp.gauge.absent = "its /metrics could not be read"
	if snap != nil && mfi.Error == "" {
		var at time.Time
		if mfi.ServerDate != nil {
			at = *mfi.ServerDate
		}
		sp.gauge = gaugeOf(snap, at)
	}
}

// readAPF fetches the APF dumps: every watch still initializing is an
// executing request, with its start time, user, resource and seats.
// Through the kubeconfig host, the requests dump is checked against the
// sample's /metrics, read just before it (tieByContent).
func (sp *sampler) readAPF() {
	if sp.cfg.Wants(api.FileAPFRequests) {
		fi := sp.fetch(api.FileAPFRequests, func(r io.Reader) error {
			b, err := model.ReadAll(r, sp.c.Inst.Name+": reading APF dump_requests")
			if err != nil {
				return err
			}
			if rq, err := apf.ParseRequests(bytes.NewReader(b)); err == nil {
				sp.look.Requests = rq
			}
			return sp.store(api.FileAPFRequests)(bytes.NewReader(b))
		})
		at := fi.StartedAt
		if fi.ServerDate != nil {
			at = *fi.ServerDate
		}
		sp.tieByContent(fi.Path, at)
	}
	if sp.cfg.Wants(api.FileAPFLevels) {
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
	if !sp.cfg.Wants(api.FileGoroutineDebug2) && !sp.cfg.Wants(api.FileGoroutineDebug1) {
		return
	}
	sp.fetch(api.FileGoroutineDebug1, func(r io.Reader) error {
		b, err := model.ReadAll(r, sp.c.Inst.Name+": reading the debug=1 goroutine profile")
		if err != nil {
			return err
		}
		if a, d, err := watches.ReadProfile(bytes.NewReader(b), watches.FormatDebug1); err == nil {
			sp.look.Profile, sp.look.Phases = a, d.PhaseCounts
		}
		sp.debug1 = b
		return nil
	})
}

// dumpIfNeeded takes the debug=2 dump when harm.DecideDump allows it, and
// records why not otherwise: the cheap look's answer (a note), the pause
// budget (a withheld dump) or MaxGoroutines (an error).
func (sp *sampler) dumpIfNeeded() {
	cfg, inst, n := sp.cfg, sp.c.Inst, sp.n
	if !cfg.Wants(api.FileGoroutineDebug2) || sp.down != nil {
		return
	}
	take, why, withheld, err := harm.DecideDump(cfg, inst.Name, sp.look)
	switch {
	case err != nil:
		sp.errs = append(sp.errs, err)
		sp.sample.Fetches = append(sp.sample.Fetches, api.FetchInfo{Kind: api.FileGoroutineDebug2, Path: model.PathOf(api.FileGoroutineDebug2), StartedAt: cfg.Clock.Now().UTC(), Error: err.Error()})
	case take:
		cfg.Progressf("sample %d/%d: %s: goroutine dump (%s; %s)", n, cfg.Samples, inst.Name, harm.GoroutinesText(sp.look.Goroutines), why)
		ctx := sp.ctx
		sp.ctx = model.WithDumpPermit(ctx, harm.EstimateOf(sp.look))
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
		cfg.Progressf("sample %d/%d: %s", n, cfg.Samples, withheld)
		sp.ir.Withheld = append(sp.ir.Withheld, withheld)
		sp.sample.Withheld = withheld.Cost()
	default:
		cfg.Progressf("sample %d/%d: %s: no goroutine dump needed: %s", n, cfg.Samples, inst.Name, why)
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
	if ir.Version != "" || !sp.cfg.Wants(api.FileVersion) {
		return
	}
	sp.fetch(api.FileVersion, func(r io.Reader) error {
		b, err := model.ReadAll(r, sp.c.Inst.Name+": reading /version")
		if err != nil {
			return err
		}
		var v struct {
			GitVersion string `json:"gitVersion"`
			GoVersion  string `json:"goVersion"`
		}
		if err := json.Unmarshal(b, &v); err != nil {
			return fmt.Errorf("%s: decoding /version: %w", sp.c.Inst.Name, err)
		}
		ir.Version, ir.GoVersion = v.GitVersion, v.GoVersion
		if c := versionContradiction(v.GitVersion, sp.look.BuildVersion, sp.look.Profile); c != "" {
			ir.Notes = append(ir.Notes, c)
		}
		return sp.store(api.FileVersion)(bytes.NewReader(b))
	})
}

// checkSameProcess compares the process start times of an instance's
// samples: a restart between samples makes them different processes.
func checkSameProcess(ir *model.InstanceResult) {
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

// checkOwnProcess, on an instance's own connection through the load
// balancer, compares the sample's /metrics with the process the
// connection was kept for: another process on the same connection means
// the balancer spreads one connection's requests (an L7 balancer), and
// the sample may mix instances.
func (sp *sampler) checkOwnProcess() {
	o := sp.c.Conn
	if o == nil || math.IsNaN(sp.look.Start) || sp.look.Start == o.Process.Start {
		return
	}
	how := "over the same connection: the load balancer spreads one connection's requests over API server processes (an HTTP, L7, balancer), so each fetch may come from any instance and the instances cannot be read one by one through it"
	if o.Redialed() {
		how = "over a new connection, dialed during the sample"
	}
	sp.mixed(fmt.Sprintf("sample %d: /metrics came from process_start_time_seconds %.2f, not %.2f, the process this connection was kept for, %s", sp.n, sp.look.Start, o.Process.Start, how), !o.Redialed())
}

// checkSampledElsewhere, on a connection through the load balancer, asks
// the run's ledger whether the process this sample's /metrics reached is
// one another connection samples: then this sample takes no goroutine
// dump or trace of it again (gatherEvidence), and says so.
func (sp *sampler) checkSampledElsewhere() {
	o := sp.c.Conn
	if o == nil || o.Ledger == nil || math.IsNaN(sp.look.Start) {
		return
	}
	other := o.Ledger.Claim(sp.look.Start, sp.c)
	if other == nil {
		return
	}
	sp.elsewhere = true
	note := fmt.Sprintf("sample %d: /metrics reached the API server process %s samples (process_start_time_seconds %.2f): no goroutine dump or execution trace is taken of it again over this connection", sp.n, other.Inst.Name, sp.look.Start)
	sp.ir.Notes = append(sp.ir.Notes, note)
	sp.cfg.Progressf("%s: %s", sp.c.Inst.Name, note)
}
