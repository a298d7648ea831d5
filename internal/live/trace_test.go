package live

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime/trace"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/bundle"
	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	pkgtrace "github.com/watch-doctor/watch-doctor/pkg/trace"
)

// traceConfig reads s twice, 2 s apart, choosing a trace between the
// samples (the real clock: the server's tracer takes real time).
func traceConfig(t *testing.T, s *fakeapiserver.Server, evidence model.Evidence) model.Config {
	t.Helper()
	return model.Config{REST: fakeapiserver.RESTConfig(t, s, fakeapiserver.TokenAdmin), APIServers: []string{s.Address()}, Samples: 2, Interval: 2 * time.Second,
		RequestTimeout: 20 * time.Second, Clock: clock.RealClock{}, MaxPause: time.Nanosecond, Trace: model.TraceConfig{Evidence: evidence}}
}

// Between sample A and sample B the instance is traced: a 1 s probe,
// then the interval, streamed into the parser and into the bundle's
// <instance>/trace.out; sample B takes no dump, and the cost counts the
// traces' bytes.
func TestTraceBetweenTheSamples(t *testing.T) {
	// Not parallel: it runs the process's one execution tracer (the fake
	// server's /debug/pprof/trace, runtime/trace.Start), which a second
	// trace at the same time would find busy.
	s := fakeapiserver.Start(t, golden.Fixture("t1"), golden.Fixture("t2"))
	s.Trace = true
	root := t.TempDir()
	res, err := Run(context.Background(), traceConfig(t, s, model.EvidenceTrace), &bundle.Dir{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	ir := res.Instances[0]
	tr := ir.Trace
	if tr == nil || tr.Summary == nil || tr.Err != nil {
		t.Fatalf("trace %+v, errors %v", tr, ir.Errors)
	}
	var got []string
	for _, p := range s.Requests() {
		if strings.HasPrefix(p, "/debug/pprof/") {
			got = append(got, p)
		}
	}
	want := []string{"/debug/pprof/goroutine?debug=1", "/debug/pprof/trace?seconds=1", "/debug/pprof/trace?seconds=2", "/debug/pprof/goroutine?debug=1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("profiling requests (-want +got):\n%s", diff)
	}
	if tr.Requested != 2*time.Second || tr.Summary.Window < time.Second || tr.BudgetCut {
		t.Errorf("requested %s, window %s, cut %v; want the 2 s interval", tr.Requested, tr.Summary.Window, tr.BudgetCut)
	}
	fi, err := os.Stat(filepath.Join(root, bundle.SafeName(s.Address()), "trace.out"))
	if err != nil || fi.Size() != tr.Fetch.Bytes || tr.Fetch.File != "trace.out" || tr.Fetch.Error != "" {
		t.Errorf("trace.out: %v, %v; fetch %+v", fi, err, tr.Fetch)
	}
	if ir.Cost == nil || ir.Cost.BytesRead < tr.Probe.Bytes+tr.Fetch.Bytes || tr.Probe.Bytes == 0 {
		t.Errorf("cost %+v, probe %d bytes, trace %d bytes: the cost must count both", ir.Cost, tr.Probe.Bytes, tr.Fetch.Bytes)
	}
	if n := strings.Join(ir.Samples[1].Notes, "; "); !strings.Contains(n, "the execution trace of the interval decides") {
		t.Errorf("sample B notes %q", n)
	}
	if e := ir.EvidenceText(); !strings.Contains(e, "an execution trace of the interval (evidence trace)") || !strings.Contains(e, "the trace covers") {
		t.Errorf("evidence %q", e)
	}
	m := res.Manifest(api.Manifest{})
	if m.Instances[0].Trace == nil || m.Instances[0].Trace.File != "trace.out" || m.Instances[0].Evidence == "" {
		t.Errorf("manifest instance %+v: want the trace's fetch and the evidence", m.Instances[0])
	}
}

// When the server cannot be traced the run falls back, with a note that
// says why, to what the samples alone decide; the dump withheld for its
// pause is reported as before.
func TestTraceFallbacks(t *testing.T) {
	// Not parallel: it runs the process's one execution tracer (the fake
	// server's /debug/pprof/trace, runtime/trace.Start), which a second
	// trace at the same time would find busy.
	var real bytes.Buffer
	if err := trace.Start(&real); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // a trace of some length, not a synchronisation
	trace.Stop()
	oldGo := fakeapiserver.CopyCapture(t, golden.Fixture("t1"), "2026-11-29T10:22:47Z")
	v, err := os.ReadFile(filepath.Join(oldGo, "version.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(oldGo, "version.json"), bytes.Replace(v, []byte(`"go1.26.8"`), []byte(`"go1.21.13"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		capture string
		setup   func(*testing.T, *fakeapiserver.Server)
		want    func(error) bool
		note    string
	}{
		{"profiling disabled", golden.Fixture("t1"), func(*testing.T, *fakeapiserver.Server) {}, is[*model.ProfilingDisabledError], "profiling is disabled"},
		{"a trace already running", golden.Fixture("t1"), func(t *testing.T, s *fakeapiserver.Server) {
			s.Trace = true
			if err := trace.Start(&bytes.Buffer{}); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(trace.Stop)
		}, is[*model.TraceBusyError], "already running"},
		{"go older than 1.22", oldGo, func(*testing.T, *fakeapiserver.Server) {}, is[*model.TraceUnsupportedError], "needs Go 1.22 or later"},
		{"a stream cut short", golden.Fixture("t1"), func(_ *testing.T, s *fakeapiserver.Server) { s.TraceBody = real.Bytes()[:real.Len()/2] }, is[*pkgtrace.TruncatedError], "cut short"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := fakeapiserver.Start(t, tt.capture)
			tt.setup(t, s)
			res, err := Run(context.Background(), traceConfig(t, s, model.EvidenceAuto), NewCaptures())
			if err != nil {
				t.Fatal(err)
			}
			ir := res.Instances[0]
			if ir.Trace == nil || ir.Trace.Summary != nil || !tt.want(ir.Trace.Err) {
				t.Fatalf("trace %+v: want a fallback", ir.Trace)
			}
			notes := strings.Join(ir.Notes, "; ")
			if !strings.Contains(notes, "no execution trace: ") || !strings.Contains(notes, tt.note) {
				t.Errorf("notes %q, want the fallback saying %q", notes, tt.note)
			}
			if len(ir.Withheld) != 2 {
				t.Errorf("%d withheld dumps, want sample A's and sample B's: the fallback decides as without a trace", len(ir.Withheld))
			}
			if strings.Contains(strings.Join(s.Requests(), " "), "/debug/pprof/trace") != (tt.name != "go older than 1.22") {
				t.Errorf("requests %q: a trace is asked for unless the Go version rules it out", s.Requests())
			}
		})
	}
}

func is[T error](err error) bool {
	var target T
	return errors.As(err, &target)
}

// The whole interval is asked for, whatever the probe's estimate, and the
// trace stops at a generation's end when the next would not fit the
// budget: the budget is spent on what the server sends. The probe is a
// short real trace (a low estimate), the trace the real seed server's 20
// generations (2.4 MB) against a budget of 1 MB after the probe, asked
// for its 20 s and taking them on the run's clock (TraceClock): a trace
// arriving at once would be set aside (tracefetch/traceplausible.go).
func TestTraceStopsAtTheBudget(t *testing.T) {
	// Not parallel: it runs the process's one execution tracer.
	var probe bytes.Buffer
	if err := trace.Start(&probe); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // a trace of some length, not a synchronisation
	trace.Stop()
	seed, err := os.ReadFile(filepath.Join("..", "..", "testdata", "kube-apiserver-v1.37.2", "trace-seed", "bundle", "127.0.0.1", "trace.out"))
	if err != nil {
		t.Fatal(err)
	}
	s := fakeapiserver.Start(t, golden.Fixture("t1"), golden.Fixture("t2"))
	s.Hostile = map[string]*fakeapiserver.Hostility{"/debug/pprof/trace?seconds=1": {Kind: fakeapiserver.ErrorBody, Status: 200, Body: probe.String()}}
	s.TraceBody = seed
	const remaining = 1_000_000
	cfg := traceConfig(t, s, model.EvidenceTrace)
	cfg.Trace.Budget = int64(probe.Len()) + remaining
	clk := testingclock.NewFakeClock(time.Now())
	cfg.Clock, cfg.Interval, s.TraceClock = clk, 20*time.Second, clk
	res, err := Run(context.Background(), cfg, NewCaptures())
	if err != nil {
		t.Fatal(err)
	}
	tr := res.Instances[0].Trace
	if tr == nil || tr.Summary == nil || tr.Err != nil || tr.Fetch == nil {
		t.Fatalf("trace %+v", tr)
	}
	if tr.Requested != cfg.Interval || !tr.BudgetCut {
		t.Errorf("requested %s, budget cut %v: want the whole %s interval asked for, and the budget to stop it", tr.Requested, tr.BudgetCut, cfg.Interval)
	}
	if g := tr.Summary.Generations; g < 3 || g >= 20 || tr.Summary.Truncated || !tr.Summary.StoppedEarly {
		t.Errorf("%d generations, truncated %v, stopped early %v: want a few whole generations, stopped before the budget", g, tr.Summary.Truncated, tr.Summary.StoppedEarly)
	}
	if tr.Fetch.Bytes > remaining || tr.Fetch.Error != "" {
		t.Errorf("read %d bytes (error %q): over the %d the budget leaves", tr.Fetch.Bytes, tr.Fetch.Error, remaining)
	}
	if !strings.Contains(tr.Summary.Why, "would not hold another generation") || !strings.Contains(tr.Window, "cut the 20s interval") {
		t.Errorf("why %q, window %q: want the budget named", tr.Summary.Why, tr.Window)
	}
}

// TestDoNoHarmATraceRunNeverDumps: with the execution trace as evidence,
// a trace that fails (here 404) leaves sample 2 without a dump: the
// dump is withheld, with the policy's reason, not taken.
func TestDoNoHarmATraceRunNeverDumps(t *testing.T) {
	s := fakeapiserver.Start(t, golden.Fixture("t1"), golden.Fixture("t2"))
	s.ForbidDumps(t)
	cfg := hostileConfig(t, s)
	cfg.Force, cfg.Samples, cfg.Interval = false, 2, 70*time.Second
	// The instance tracing goes from sample 1 to sample 2 through its
	// trace, without waiting on the clock.
	cfg.Clock = fakeapiserver.NoWaitClock{FakeClock: testingclock.NewFakeClock(time.Now()), T: t}
	cfg.Trace = model.TraceConfig{Evidence: model.EvidenceTrace}
	res, err := Run(context.Background(), cfg, NewCaptures())
	if err != nil {
		t.Fatal(err)
	}
	ir := res.Instances[0]
	var why []string
	for _, w := range ir.Withheld {
		why = append(why, w.Refused)
	}
	// One per sample without a dump: sample 1's, whose place the trace
	// took, and sample 2's.
	want := []string{"the evidence chosen is an execution trace", "the evidence chosen is an execution trace"}
	if diff := cmp.Diff(want, why); diff != "" {
		t.Errorf("withheld dumps (-want +got):\n%s", diff)
	}
}
