package live

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/english"
	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/internal/live/discovery"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

func fetchedPaths(s *fakeapiserver.Server) []string {
	var out []string
	for _, p := range s.Requests() {
		if !strings.HasPrefix(p, "/apis/") {
			out = append(out, p)
		}
	}
	return out
}

// Discovery lists the instances from the default/kubernetes EndpointSlices,
// and each instance is then read on its own address only: goroutines and
// APF state are per process.
func TestRunPinsEachDiscoveredInstance(t *testing.T) {
	t.Parallel()
	lb := fakeapiserver.Start(t, golden.Fixture("t1"))
	a := fakeapiserver.Start(t, golden.Fixture("t1"))
	b := fakeapiserver.Start(t, golden.Fixture("t2"))
	lb.Endpoints = []string{b.Address(), a.Address()}
	cfg := model.Config{REST: fakeapiserver.RESTConfig(t, lb, fakeapiserver.TokenAdmin), Samples: 1, RequestTimeout: 10 * time.Second, Clock: testingclock.NewFakeClock(time.Now()), Force: true}
	c := NewCaptures()
	res, err := Run(context.Background(), cfg, c)
	if err != nil {
		t.Fatal(err)
	}
	if got := lb.Requests(); len(got) != 2 || !strings.HasPrefix(got[0], "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dkubernetes") ||
		got[1] != fakeapiserver.LeasesPath+"?labelSelector=apiserver.kubernetes.io%2Fidentity%3Dkube-apiserver" {
		t.Errorf("the kubeconfig host got %q, want the EndpointSlices and identity Leases lists alone", got)
	}
	if want := (api.InstanceCoverage{Read: 2, Live: 2, Source: api.LiveFromEndpointSlices, LiveNames: []string{res.Instances[0].Instance.Name, res.Instances[1].Instance.Name}}); !cmp.Equal(res.Coverage, want) {
		t.Errorf("coverage %+v, want %+v", res.Coverage, want)
	}
	var names []string
	for _, ir := range res.Instances {
		names = append(names, ir.Instance.Name)
		if !ir.Instance.Pinned || ir.Instance.Address != ir.Instance.Name || len(ir.Errors) != 0 || ir.Version != "v1.37.2" {
			t.Errorf("instance %+v: errors %v, version %q", ir.Instance, ir.Errors, ir.Version)
		}
	}
	want := []string{a.Address(), b.Address()}
	if a.Address() > b.Address() {
		want = []string{b.Address(), a.Address()}
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("instances, sorted by name (-want +got):\n%s", diff)
	}
	for _, s := range []*fakeapiserver.Server{a, b} {
		got := fetchedPaths(s)
		if len(got) != 8 || got[0] != "/version" || !slices.Contains(got, "/debug/pprof/goroutine?debug=2") || got[7] != "/metrics" {
			t.Errorf("%s got %q, want the probe, a whole sample and the cost read", s.Address(), got)
		}
	}
	l := c.Loaded(res)
	if len(l.Captures) != 2 || l.Captures[0].Instance == l.Captures[1].Instance {
		t.Fatalf("captures %+v, want one per instance", l.Captures)
	}
	for _, cp := range l.Captures {
		if cp.Dump == nil || cp.Requests == nil || cp.CapturedAtSource != "server Date header" {
			t.Errorf("capture %s: dump %v, requests %v, time from %q", cp.Name, cp.Dump != nil, cp.Requests != nil, cp.CapturedAtSource)
		}
	}
}

// A user without the debug rules: discovery falls back with a note naming
// the EndpointSlices rule, every debug fetch is a *ForbiddenError naming
// its rule, and /version (public) is still read.
func TestRunWithoutTheDebugRules(t *testing.T) {
	t.Parallel()
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	cfg := model.Config{REST: fakeapiserver.RESTConfig(t, s, fakeapiserver.TokenNoDebug), Samples: 1, RequestTimeout: 10 * time.Second, Clock: testingclock.NewFakeClock(time.Now()), Force: true}
	res, err := Run(context.Background(), cfg, NewCaptures())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Notes) != 2 || !strings.Contains(res.Notes[0], `forbidden: missing RBAC rule apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["list"]`) ||
		!strings.Contains(res.Notes[1], `forbidden: missing RBAC rule apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["list"] in namespace "kube-system"`) {
		t.Errorf("notes %q, want the EndpointSlices and Leases rules named", res.Notes)
	}
	ir := res.Instances[0]
	rules := map[string]bool{}
	for _, err := range ir.Errors {
		var fe *model.ForbiddenError
		if !errors.As(err, &fe) {
			t.Errorf("error %v is not a *ForbiddenError", err)
			continue
		}
		rules[fe.Rule.NonResourceURL] = true
	}
	if diff := cmp.Diff(map[string]bool{"/metrics": true, "/debug/api_priority_and_fairness/*": true, "/debug/pprof/*": true}, rules); diff != "" {
		t.Errorf("rules named (-want +got):\n%s", diff)
	}
	if ir.Version != "v1.37.2" || ir.Failed() {
		t.Errorf("version %q, failed %v: /version is readable without the debug rules", ir.Version, ir.Failed())
	}
}

// A server with profiling off still yields its APF state and metrics; the
// dump's failure is a *ProfilingDisabledError. A server answering 500 to
// everything has failed, with an *HTTPError per fetch it was asked.
func TestRunServerErrors(t *testing.T) {
	t.Parallel()
	t.Run("profiling disabled", func(t *testing.T) {
		s := fakeapiserver.Start(t, golden.Fixture("t2"))
		s.NoProfiling = true
		cfg := model.Config{REST: fakeapiserver.RESTConfig(t, s, fakeapiserver.TokenAdmin), APIServers: []string{s.Address()}, Samples: 1, RequestTimeout: 10 * time.Second, Clock: testingclock.NewFakeClock(time.Now()), Force: true}
		c := NewCaptures()
		res, err := Run(context.Background(), cfg, c)
		if err != nil {
			t.Fatal(err)
		}
		ir := res.Instances[0]
		var pe *model.ProfilingDisabledError
		if len(ir.Errors) != 1 || !errors.As(ir.Errors[0], &pe) {
			t.Errorf("errors %v, want the debug=1 fetch refused as profiling disabled, and no debug=2 fetch after it", ir.Errors)
		}
		if got := ir.ProfileStatus(); got != http.StatusNotFound {
			t.Errorf("profile status %d, want 404", got)
		}
		if got, want := ir.EvidenceText(), "APF dump_requests and /metrics only, no goroutine dump or execution trace: /debug/pprof answered 404: profiling is disabled on this API server (--profiling=false)"; got != want {
			t.Errorf("evidence %q, want %q", got, want)
		}
		l := c.Loaded(res)
		if len(l.Captures) != 1 || l.Captures[0].Requests == nil || l.Captures[0].Metrics == nil || l.Captures[0].Dump != nil {
			t.Errorf("captures %+v, want APF and metrics without a dump", l.Captures)
		}
	})
	t.Run("500", func(t *testing.T) {
		s := fakeapiserver.Start(t, golden.Fixture("t2"))
		s.Fail = true
		clk := fakeapiserver.NoWaitClock{FakeClock: testingclock.NewFakeClock(time.Now()), T: t}
		cfg := model.Config{REST: fakeapiserver.RESTConfig(t, s, fakeapiserver.TokenAdmin), APIServers: []string{s.Address()}, Samples: 2, Interval: time.Hour, RequestTimeout: 10 * time.Second, Clock: clk}
		res, err := Run(context.Background(), cfg, NewCaptures())
		if err != nil {
			t.Fatal(err)
		}
		ir := res.Instances[0]
		if !ir.Failed() || len(ir.Samples) != 1 || len(ir.Errors) == 0 {
			t.Fatalf("failed %v, %d samples, errors %v; want one failed sample", ir.Failed(), len(ir.Samples), ir.Errors)
		}
		for _, err := range ir.Errors {
			var he *model.HTTPError
			if !errors.As(err, &he) || he.Status != http.StatusInternalServerError {
				t.Errorf("error %v, want an *HTTPError 500", err)
			}
		}
		if !slices.Contains(ir.Notes, "every fetch of the first sample failed: no further sample taken") {
			t.Errorf("notes %q", ir.Notes)
		}
	})
}

// failingTarget refuses one kind, as a parser refuses a cut body or a
// full disk refuses a file.
type failingTarget struct{ kind api.FileKind }

func (f failingTarget) Store(instance string, sample int, kind api.FileKind, body io.Reader) error {
	if _, err := io.Copy(io.Discard, body); err != nil {
		return err
	}
	if kind == f.kind {
		return errors.New("cannot store it")
	}
	return nil
}

// A target's failure is recorded against its fetch, and the instance is
// still asked the rest of the sample: the server answered.
func TestRunStoreFailureIsNotTheServers(t *testing.T) {
	t.Parallel()
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	cfg := model.Config{REST: fakeapiserver.RESTConfig(t, s, fakeapiserver.TokenAdmin), APIServers: []string{s.Address()}, Samples: 1, RequestTimeout: 10 * time.Second, Clock: testingclock.NewFakeClock(time.Now()), Force: true}
	res, err := Run(context.Background(), cfg, failingTarget{api.FileMetrics})
	if err != nil {
		t.Fatal(err)
	}
	ir := res.Instances[0]
	if len(ir.Errors) != 1 || !strings.Contains(ir.Errors[0].Error(), "cannot store it") {
		t.Errorf("errors %v, want the store failure alone", ir.Errors)
	}
	want := []string{"metrics cannot store it", "apf-requests read", "apf-priority-levels read", "goroutine-debug1 read", "goroutine-debug2 read", "version read"}
	if diff := cmp.Diff(want, fetchStates(ir.Samples[0])); diff != "" {
		t.Errorf("fetches (-want +got):\n%s", diff)
	}
}

// fetchStates says of each fetch of s its kind and how it ended: read,
// canceled, not attempted, or its error.
func fetchStates(s api.Sample) []string {
	var out []string
	for _, f := range s.Fetches {
		state := f.Error
		switch {
		case f.Error == "":
			state = "read"
		case strings.Contains(f.Error, "context canceled"):
			state = "canceled"
		case strings.Contains(f.Error, "not attempted"):
			state = "not attempted"
		}
		out = append(out, string(f.Kind)+" "+state)
	}
	return out
}

// Canceled while a fetch is in flight, Run returns what it read with
// ctx's error, and the fetch in flight is recorded as failed.
func TestRunCanceledDuringAFetch(t *testing.T) {
	t.Parallel()
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	s.Block = true
	s.Started = make(chan string)
	cfg := model.Config{REST: fakeapiserver.RESTConfig(t, s, fakeapiserver.TokenAdmin), APIServers: []string{s.Address()}, Samples: 2, Interval: time.Hour, RequestTimeout: time.Hour, Clock: testingclock.NewFakeClock(time.Now()), Force: true}
	stop := runInBackground(cfg)
	for p := range s.Started {
		if p == "/debug/pprof/goroutine?debug=2" {
			break
		}
	}
	res, err := stop()
	if !errors.Is(err, context.Canceled) || res == nil {
		t.Fatalf("Run = %v, %v; want the partial result and context.Canceled", res, err)
	}
	ir := res.Instances[0]
	if len(ir.Samples) != 1 {
		t.Fatalf("%d samples, want the one in progress", len(ir.Samples))
	}
	want := []string{"metrics read", "apf-requests read", "apf-priority-levels read", "goroutine-debug1 read", "goroutine-debug2 canceled", "version not attempted"}
	if diff := cmp.Diff(want, fetchStates(ir.Samples[0])); diff != "" {
		t.Errorf("fetches (-want +got):\n%s", diff)
	}
}

// The words name the caller's settings in progress lines and errors: the
// CLI passes its flags.
func TestRunWords(t *testing.T) {
	// Not parallel: it waits for a request timeout of a fraction of a
	// second, which the other reads must not reach on a loaded machine.
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	s.BlockAll = true
	var progress strings.Builder
	clk := fakeapiserver.NoWaitClock{FakeClock: testingclock.NewFakeClock(time.Now()), T: t}
	cfg := model.Config{REST: fakeapiserver.RESTConfig(t, s, fakeapiserver.TokenAdmin), Samples: 2, Interval: time.Hour, RequestTimeout: 100 * time.Millisecond, Clock: clk,
		Progress: &progress, Words: english.Words{RequestTimeout: "--request-timeout"}}
	res, err := Run(context.Background(), cfg, NewCaptures())
	if err != nil {
		t.Fatal(err)
	}
	errs := res.Instances[0].Errors
	var te *model.TimeoutError
	if len(errs) != 1 || !errors.As(errs[0], &te) || !strings.HasSuffix(errs[0].Error(), "timed out after 100ms (--request-timeout)") {
		t.Errorf("errors %v, want a timeout naming --request-timeout", errs)
	}
	if f := res.Instances[0].Samples[0].Fetches[0]; f.Error != errs[0].Error() {
		t.Errorf("the fetch records %q, want the error's text %q", f.Error, errs[0])
	}
}

func TestConfigWithDefaults(t *testing.T) {
	t.Parallel()
	if _, err := withDefaults(model.Config{}); err == nil || err.Error() != "invalid Config.Samples 0: at least 1" {
		t.Fatalf("withDefaults() of no samples: error %v", err)
	}
	cfg, err := withDefaults(model.Config{Samples: 1, Progress: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Clock == nil || cfg.Parallel != defaultParallel || cfg.ProgressEvery != 5*time.Second {
		t.Errorf("withDefaults() = clock %v, parallel %d, progress every %s; want a clock, %d, 5s", cfg.Clock, cfg.Parallel, cfg.ProgressEvery, defaultParallel)
	}
	if _, ok := cfg.Progress.(*lockedWriter); !ok {
		t.Errorf("Progress is %T, want it serialized by a *lockedWriter", cfg.Progress)
	}
	kept, err := withDefaults(model.Config{Samples: 2, Parallel: 7, ProgressEvery: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if kept.Parallel != 7 || kept.ProgressEvery != time.Second || kept.Progress != nil {
		t.Errorf("withDefaults() changed set values: parallel %d, progress every %s, progress %v", kept.Parallel, kept.ProgressEvery, kept.Progress)
	}
}

func TestDropFailed(t *testing.T) {
	t.Parallel()
	ok := api.Sample{Fetches: []api.FetchInfo{{Error: "refused"}, {}}}
	failed := api.Sample{Fetches: []api.FetchInfo{{Error: "refused"}, {Error: "refused"}}}
	tests := []struct {
		samples   int
		wantNotes int
	}{{samples: 1, wantNotes: 0}, {samples: 3, wantNotes: 1}}
	for _, tt := range tests {
		clients := []*model.Client{{}, {}, nil}
		results := []model.InstanceResult{{Samples: []api.Sample{ok}}, {Samples: []api.Sample{failed}}, {}}
		got := dropFailed(model.Config{Samples: tt.samples}, clients, results)
		if got != 1 || clients[0] == nil || clients[1] != nil {
			t.Errorf("samples %d: dropFailed = %d, clients %v; want 1, the failed instance's client cleared", tt.samples, got, clients)
		}
		if len(results[1].Notes) != tt.wantNotes || len(results[0].Notes) != 0 {
			t.Errorf("samples %d: notes %q and %q, want %d for the failed instance only", tt.samples, results[0].Notes, results[1].Notes, tt.wantNotes)
		}
		if n := countReachable(clients); n != 1 {
			t.Errorf("countReachable = %d, want 1", n)
		}
	}
}

// TestHangingDiscoveryFailsWithinTheRequestTimeout: when the kubeconfig
// host does not answer the EndpointSlices list, falling back to it would
// only wait again: Run fails at once.
func TestHangingDiscoveryFailsWithinTheRequestTimeout(t *testing.T) {
	// Not parallel: it waits for a request timeout of a fraction of a
	// second, which the other reads must not reach on a loaded machine.
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	s.BlockDiscovery = true
	cfg := model.Config{REST: fakeapiserver.RESTConfig(t, s, fakeapiserver.TokenAdmin), Samples: 2, Interval: time.Hour, RequestTimeout: 300 * time.Millisecond, Clock: fakeapiserver.NoWaitClock{FakeClock: testingclock.NewFakeClock(time.Now()), T: t}}
	_, err := Run(context.Background(), cfg, NewCaptures())
	var ue *discovery.UnreachableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "no answer within the request timeout") {
		t.Errorf("Run = %v, want an *UnreachableError naming the timeout", err)
	}
	if got := s.Requests(); len(got) != 1 {
		t.Errorf("requests %q, want the list alone", got)
	}
}
