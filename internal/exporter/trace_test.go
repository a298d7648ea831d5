package exporter

import (
	"bytes"
	"context"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	"github.com/watch-doctor/watch-doctor/internal/watches"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
)

// newTraceTest serves the trace seed: the cheap look's two /metrics read
// sample A, and so does the traced look's sample A; its sample B reads
// sample-2. The trace served is the seed's (fakeapiserver.TraceSeed),
// taking as long as asked on the clock.
func newTraceTest(t *testing.T, tc TraceConfig) (*Exporter, *fakeapiserver.Server, *testingclock.FakeClock, *bytes.Buffer) {
	t.Helper()
	a, b := fakeapiserver.TraceSeedSample(t, "1"), fakeapiserver.TraceSeedSample(t, "2")
	s := fakeapiserver.Start(t, a, a, a, b)
	s.Endpoints = []string{s.Address()}
	s.TraceBody = fakeapiserver.TraceSeed(t)
	clk := testingclock.NewFakeClock(lookedAt)
	s.TraceClock = clk
	logs := &bytes.Buffer{}
	e, err := New(Config{
		// The traced look's deadline counts twice the request timeout in
		// real time: the trace's parse under -race on a loaded machine must
		// not reach it (no test here waits for it).
		Live:     model.Config{REST: fakeapiserver.RESTConfig(t, s, fakeapiserver.TokenAdmin), RequestTimeout: 5 * time.Minute},
		Interval: 30 * time.Second, Clock: clk, Trace: tc,
		Logger: slog.New(slog.NewJSONHandler(logs, nil)),
		Rand:   func() float64 { return 0.5 },
	})
	if err != nil {
		t.Fatal(err)
	}
	return e, s, clk, logs
}

// profiling lists the /debug/pprof requests s answered.
func profiling(s *fakeapiserver.Server) []string {
	var out []string
	for _, p := range s.Requests() {
		if strings.HasPrefix(p, "/debug/pprof/") {
			out = append(out, p)
		}
	}
	return out
}

// states reads watchdoctor_watches_by_state of the instance.
func states(t *testing.T, e *Exporter, inst string) map[string]float64 {
	t.Helper()
	mfs, err := e.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "watchdoctor_watches_by_state" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["apiserver"] == inst {
				out[labels["state"]] = m.GetGauge().GetValue()
			}
		}
	}
	return out
}

// value reads one sample of a metric of the instance; ok false when
// absent.
func value(t *testing.T, e *Exporter, name, inst string) (float64, bool) {
	t.Helper()
	mfs, err := e.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "apiserver" && l.GetValue() == inst {
					if c := m.GetCounter(); c != nil {
						return c.GetValue(), true
					}
					return m.GetGauge().GetValue(), true
				}
			}
		}
	}
	return 0, false
}

// The look leaves both watches undecided (past the stall bound, the
// debug=1 profile shows initial-phase watchers blocked sending); the
// trace then decides one stuck and one progressing, and what it cost is
// exported. No debug=2 dump is ever asked for.
func TestTraceDecidesStuckAndProgressing(t *testing.T) {
	t.Parallel()
	e, s, _, _ := newTraceTest(t, TraceConfig{Window: 20 * time.Second})
	if !e.LookOnce(context.Background()) {
		t.Fatal("the look read nothing")
	}
	inst := s.Address()
	want := map[string]float64{StateStuck: 1, StateProgressing: 1, StateUndecided: 0}
	if diff := cmp.Diff(want, states(t, e, inst)); diff != "" {
		t.Errorf("watches by state (-want +got):\n%s", diff)
	}
	wantReqs := []string{
		"/debug/pprof/goroutine?debug=1",                                // the look
		"/debug/pprof/goroutine?debug=1",                                // sample A
		"/debug/pprof/trace?seconds=1", "/debug/pprof/trace?seconds=20", // probe, window
		"/debug/pprof/goroutine?debug=1", // sample B
	}
	if diff := cmp.Diff(wantReqs, profiling(s)); diff != "" {
		t.Errorf("profiling requests (-want +got):\n%s", diff)
	}
	if got, _ := value(t, e, "watchdoctor_trace_bytes_total", inst); got != float64(2*len(s.TraceBody)) {
		t.Errorf("trace bytes %g, want the probe's and the window's, %d", got, 2*len(s.TraceBody))
	}
	if got, ok := value(t, e, "watchdoctor_trace_window_seconds", inst); !ok || got < 15 {
		t.Errorf("trace window %g (%v), want the seed trace's span, 20 s or so", got, ok)
	}
	if _, ok := value(t, e, "watchdoctor_last_trace_server_pause_seconds", inst); !ok {
		t.Error("no watchdoctor_last_trace_server_pause_seconds: the traced look's pauses are read from its two samples")
	}
	if n := testutil.CollectAndCount(e.Registry(), "watchdoctor_look_errors_total"); n != 0 {
		t.Errorf("%d look error series, want none", n)
	}
}

// Without --trace-window the look never traces: both watches stay
// undecided, stuck unknown.
func TestTraceOffByDefault(t *testing.T) {
	t.Parallel()
	e, s, _, _ := newTraceTest(t, TraceConfig{})
	if !e.LookOnce(context.Background()) {
		t.Fatal("the look read nothing")
	}
	want := map[string]float64{StateProgressing: 0, StateUndecided: 2}
	if diff := cmp.Diff(want, states(t, e, s.Address())); diff != "" {
		t.Errorf("watches by state (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"/debug/pprof/goroutine?debug=1"}, profiling(s)); diff != "" {
		t.Errorf("profiling requests (-want +got):\n%s", diff)
	}
}

func countTraces(s *fakeapiserver.Server) int {
	n := 0
	for _, p := range profiling(s) {
		if strings.HasPrefix(p, "/debug/pprof/trace?seconds=20") {
			n++
		}
	}
	return n
}

// A second look within Every traces nothing and carries the decision on
// (the same two watches are past the bound); once Every has passed, the
// next look traces again.
func TestTraceSpacing(t *testing.T) {
	t.Parallel()
	e, s, clk, _ := newTraceTest(t, TraceConfig{Window: 20 * time.Second, Every: 5 * time.Minute})
	ctx := context.Background()
	e.LookOnce(ctx)
	want := map[string]float64{StateStuck: 1, StateProgressing: 1, StateUndecided: 0}
	for _, step := range []struct {
		after  time.Duration
		traces int
	}{{30 * time.Second, 1}, {4 * time.Minute, 1}, {time.Minute, 2}} {
		clk.Step(step.after)
		e.LookOnce(ctx)
		if got := countTraces(s); got != step.traces {
			t.Errorf("after %s more: %d traces, want %d", step.after, got, step.traces)
		}
		if diff := cmp.Diff(want, states(t, e, s.Address())); diff != "" {
			t.Errorf("after %s more: watches by state (-want +got):\n%s", step.after, diff)
		}
	}
}

// A trace that fails is a look error of a fixed kind and a log line; the
// watches stay undecided (stuck unknown) and the look itself counts.
func TestTraceFailureKinds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, e *Exporter, s *fakeapiserver.Server)
		trace TraceConfig
		want  string
	}{
		{name: "forbidden", want: KindTraceForbidden, setup: func(t *testing.T, e *Exporter, s *fakeapiserver.Server) {
			s.Hostile = map[string]*fakeapiserver.Hostility{"/debug/pprof/trace": {Kind: fakeapiserver.ErrorBody, Status: 403, Body: "forbidden"}}
		}},
		{name: "profiling disabled", want: KindTraceNoProfiling, setup: func(t *testing.T, e *Exporter, s *fakeapiserver.Server) {
			s.Hostile = map[string]*fakeapiserver.Hostility{"/debug/pprof/trace": {Kind: fakeapiserver.ErrorBody, Status: 404, Body: "404 page not found"}}
		}},
		{name: "already running", want: KindTraceBusy, setup: func(t *testing.T, e *Exporter, s *fakeapiserver.Server) {
			s.Hostile = map[string]*fakeapiserver.Hostility{"/debug/pprof/trace": {Kind: fakeapiserver.ErrorBody, Status: 500, Body: "Could not enable tracing: execution tracer already enabled\n"}}
		}},
		{name: "old Go", want: KindTraceUnsupported, setup: func(t *testing.T, e *Exporter, s *fakeapiserver.Server) {
			for _, dir := range s.Captures {
				p := filepath.Join(dir, "version.json")
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, bytes.ReplaceAll(b, []byte("go1.26.8"), []byte("go1.21.13")), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}},
		// The probe reads the 2.4 MB seed trace: 3 MiB leaves too little.
		{name: "budget", want: KindTraceBudget, trace: TraceConfig{Budget: 3 << 20}},
		{name: "cut short", want: KindTraceCut, setup: func(t *testing.T, e *Exporter, s *fakeapiserver.Server) {
			// The probe reads the whole trace; the window's is cut.
			cut := string(s.TraceBody[:len(s.TraceBody)*2/3])
			s.Hostile = map[string]*fakeapiserver.Hostility{"/debug/pprof/trace?seconds=20": {Kind: fakeapiserver.ErrorBody, Status: 200, Body: cut}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			trace := tc.trace
			trace.Window = 20 * time.Second
			e, s, _, logs := newTraceTest(t, trace)
			if tc.setup != nil {
				tc.setup(t, e, s)
			}
			if !e.LookOnce(context.Background()) {
				t.Fatal("the look read nothing: a trace's failure must not fail it")
			}
			inst := s.Address()
			if got, ok := value(t, e, "watchdoctor_look_errors_total", inst); !ok || got != 1 {
				t.Errorf("look errors %g (%v), want 1", got, ok)
			}
			var kinds []string
			mfs, _ := e.Registry().Gather()
			for _, mf := range mfs {
				if mf.GetName() != "watchdoctor_look_errors_total" {
					continue
				}
				for _, m := range mf.GetMetric() {
					for _, l := range m.GetLabel() {
						if l.GetName() == "kind" {
							kinds = append(kinds, l.GetValue())
						}
					}
				}
			}
			if diff := cmp.Diff([]string{tc.want}, kinds); diff != "" {
				t.Errorf("error kinds (-want +got):\n%s", diff)
			}
			if st := states(t, e, inst); st[StateUndecided] == 0 {
				if _, stuck := st[StateStuck]; tc.want != KindTraceCut || !stuck {
					t.Errorf("states %v: want watches undecided after a failed trace", st)
				}
			}
			if !strings.Contains(logs.String(), `"msg":"trace error"`) || !strings.Contains(logs.String(), `"kind":"`+tc.want+`"`) {
				t.Errorf("no trace error line of kind %q in the logs:\n%s", tc.want, logs)
			}
		})
	}
}

// The kind of a traced look cut by its deadline is trace_timeout,
// whatever error the cut caused.
func TestTraceKindTimeout(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), -time.Second)
	defer cancel()
	if got := traceKind(ctx, context.DeadlineExceeded, false); got != KindTraceTimeout {
		t.Errorf("kind %q, want %q", got, KindTraceTimeout)
	}
	if got := traceKind(context.Background(), &model.TimeoutError{}, false); got != KindTraceFailed {
		t.Errorf("kind %q, want %q", got, KindTraceFailed)
	}
}

// A decision is carried only while the watches past the bound are the
// ones the trace judged.
func TestCarry(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	stuck := watchReq("stuck", "global-default", "/api/v1/pods", "pods", 1, at.Add(-90*time.Second))
	slow := watchReq("slow", "global-default", "/api/v1/pods", "pods", 1, at.Add(-80*time.Second))
	young := watchReq("young", "global-default", "/api/v1/pods", "pods", 1, at.Add(-5*time.Second))
	later := watchReq("later", "global-default", "/api/v1/pods", "pods", 1, at.Add(-35*time.Second))
	judged := watches.Sample{CapturedAt: at, Requests: &apf.Requests{HasDetails: true, Requests: []apf.Request{stuck, slow}}}
	undecided := map[string]int{StateProgressing: 0, StateUndecided: 2}
	for _, tc := range []struct {
		name string
		reqs []apf.Request
		want map[string]int
	}{
		{"the same two", []apf.Request{stuck, slow}, map[string]int{StateStuck: 1, StateProgressing: 1, StateUndecided: 0}},
		{"the same two and a young one", []apf.Request{stuck, slow, young}, map[string]int{StateStuck: 1, StateProgressing: 2, StateUndecided: 0}},
		{"one ended", []apf.Request{stuck}, undecided},
		{"a new one past the bound", []apf.Request{stuck, slow, later}, undecided},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newBare(t)
			e.decisions["a"] = decision{keys: undecidedKeys(judged), stuck: 1}
			s := watches.Sample{CapturedAt: at, Requests: &apf.Requests{HasDetails: true, Requests: tc.reqs}}
			snap := instanceSnap{name: "a", states: maps.Clone(undecided), undecided: undecidedKeys(s)}
			e.carry(&snap, s)
			if diff := cmp.Diff(tc.want, snap.states); diff != "" {
				t.Errorf("states (-want +got):\n%s", diff)
			}
		})
	}
}

// An instance read through the kubeconfig host (no EndpointSlice lists
// it) is never traced: a load balancer may send the samples and the
// trace to different processes. serve says so once.
func TestTraceNeverThroughTheKubeconfigHost(t *testing.T) {
	t.Parallel()
	e, s, clk, logs := newTraceTest(t, TraceConfig{Window: 20 * time.Second, Every: time.Minute})
	s.Endpoints = nil
	for range 2 {
		if !e.LookOnce(context.Background()) {
			t.Fatal("the look read nothing")
		}
		clk.Step(2 * time.Minute)
	}
	if got := countTraces(s); got != 0 {
		t.Errorf("%d traces of an unpinned instance, want none", got)
	}
	if n := strings.Count(logs.String(), `"msg":"not tracing: the instance is read through the kubeconfig host, not at its own address"`); n != 1 {
		t.Errorf("%d lines saying why it is not traced, want 1:\n%s", n, logs)
	}
	want := map[string]float64{StateProgressing: 0, StateUndecided: 2}
	if diff := cmp.Diff(want, states(t, e, s.Address())); diff != "" {
		t.Errorf("watches by state (-want +got):\n%s", diff)
	}
}
