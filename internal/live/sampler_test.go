package live

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/metrics"
)

// recorder is a Target that keeps what it is handed.
type recorder struct{ kinds []string }

func (r *recorder) Store(instance string, sample int, kind api.FileKind, body io.Reader) error {
	if _, err := io.Copy(io.Discard, body); err != nil {
		return err
	}
	r.kinds = append(r.kinds, string(kind))
	return nil
}

func TestRunFetchOrderAndOnly(t *testing.T) {
	t.Parallel()
	s := fakeapiserver.Start(t, golden.Fixture("t1"), golden.Fixture("t2"))
	clk := testingclock.NewFakeClock(time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC))
	cfg := model.Config{REST: fakeapiserver.RESTConfig(t, s, fakeapiserver.TokenAdmin), APIServers: []string{s.Address()}, Samples: 1, RequestTimeout: 10 * time.Second, Clock: clk, MaxGoroutines: 500000}
	var rec recorder
	res, err := Run(context.Background(), cfg, &rec)
	if err != nil {
		t.Fatal(err)
	}
	// The cheap look first (/metrics, the APF dumps, the debug=1
	// profile), then the stop-the-world dump.
	wantReqs := []string{
		"/version", // the probe of a pinned instance
		"/metrics",
		"/debug/api_priority_and_fairness/dump_requests?includeRequestDetails=1",
		"/debug/api_priority_and_fairness/dump_priority_levels",
		"/debug/pprof/goroutine?debug=1",
		"/debug/pprof/goroutine?debug=2",
		"/version",
		"/metrics", // the cost: the pauses after the last fetch
	}
	if diff := cmp.Diff(wantReqs, s.Requests()); diff != "" {
		t.Errorf("fetch order (-want +got):\n%s", diff)
	}
	// The profile is stored after the dump, which is read instead.
	want := []string{"metrics", "apf-requests", "apf-priority-levels", "goroutine-debug2", "goroutine-debug1", "version"}
	if diff := cmp.Diff(want, rec.kinds); diff != "" {
		t.Errorf("store order (-want +got):\n%s", diff)
	}
	if len(res.Instances) != 1 || len(res.Instances[0].Errors) != 0 || res.Instances[0].Version != "v1.37.2" {
		t.Fatalf("result = %+v", res.Instances)
	}
	// The capture time is the server's Date header of the goroutine dump.
	if got := res.Instances[0].Samples[0].CapturedAt; !got.Equal(time.Date(2026, 11, 29, 10, 23, 9, 0, time.UTC)) {
		t.Errorf("captured at %v, want the server's Date", got)
	}

	rec = recorder{}
	cfg.Only = []api.FileKind{api.FileMetrics}
	if _, err := Run(context.Background(), cfg, &rec); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"metrics"}, rec.kinds); diff != "" {
		t.Errorf("with Only=metrics (-want +got):\n%s", diff)
	}
}

// signalClock tells when the sampler starts waiting between samples.
type signalClock struct {
	*testingclock.FakeClock
	waiting chan struct{}
}

func (c signalClock) After(d time.Duration) <-chan time.Time {
	ch := c.FakeClock.After(d)
	close(c.waiting)
	return ch
}

func TestRunCanceledWhileWaitingForTheNextSample(t *testing.T) {
	t.Parallel()
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	clk := signalClock{testingclock.NewFakeClock(time.Now()), make(chan struct{})}
	cfg := model.Config{REST: fakeapiserver.RESTConfig(t, s, fakeapiserver.TokenAdmin), APIServers: []string{s.Address()}, Samples: 2, Interval: time.Minute, RequestTimeout: 10 * time.Second, Clock: clk}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, cfg, &recorder{})
		done <- err
	}()
	select {
	case <-clk.waiting:
	case err := <-done:
		t.Fatalf("Run returned before waiting for the second sample: %v", err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run = %v, want context.Canceled", err)
	}
}

func TestServerURLPathPrefixIsKept(t *testing.T) {
	t.Parallel()
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	s.PathPrefix = "/k8s/clusters/c-abc"
	cfg := fakeapiserver.RESTConfig(t, s, fakeapiserver.TokenAdmin)
	cfg.Host += s.PathPrefix
	c, err := model.NewClient(cfg, model.Instance{Name: "proxy"}, 10*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Get(context.Background(), "/version")
	if err != nil {
		t.Fatalf("GET /version through the prefix: %v", err)
	}
	r.Close()
	if got := s.Requests(); len(got) != 1 || got[0] != "/k8s/clusters/c-abc/version" {
		t.Errorf("requests = %q, want the prefixed path", got)
	}
}

// TestCheckSameProcess: samples whose /metrics name another process start
// get a note each; equal starts, and fetches without a start, get none.
func TestCheckSameProcess(t *testing.T) {
	t.Parallel()
	sample := func(start float64) api.Sample {
		return api.Sample{Fetches: []api.FetchInfo{{Kind: api.FileAPFRequests}, {Kind: api.FileMetrics, ProcessStartTime: start}}}
	}
	tests := []struct {
		name    string
		samples []api.Sample
		want    []string
	}{
		{"one process", []api.Sample{sample(100), sample(100)}, nil},
		{"no start read", []api.Sample{sample(0), sample(100), sample(100)}, nil},
		{"restarted", []api.Sample{sample(100), sample(250), sample(100)}, []string{
			"sample 2 came from a different process than sample 1 (process_start_time_seconds 100, then 250): the API server restarted, or a load balancer switched servers; samples are not compared",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ir := &model.InstanceResult{Samples: tc.samples}
			checkSameProcess(ir)
			if diff := cmp.Diff(tc.want, ir.Notes); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCountingReader counts every byte read through it.
// TestLookFamiliesHoldWhatTheLookReads: of the real capture's /metrics,
// the families the cheap look parses (lookFamilies, startFamily) give
// the goroutines, the process start time, the build's version and the
// pause histogram exactly as the whole /metrics does.
func TestLookFamiliesHoldWhatTheLookReads(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(golden.Fixture("t1"), "metrics.txt"))
	if err != nil {
		t.Fatal(err)
	}
	type look struct {
		Goroutines, Start float64
		GitVersion        string
		Pauses            metrics.Pauses
	}
	read := func(families []string) look {
		s, err := metrics.Parser{Families: families}.Parse(bytes.NewReader(b), "t1")
		if err != nil {
			t.Fatal(err)
		}
		snap := metrics.Extract(s)
		p, _, _ := metrics.SchedPauses(s)
		return look{snap.Goroutines, snap.ProcessStartTime, snap.Version.GitVersion, p}
	}
	whole := read(nil)
	if whole.GitVersion == "" || whole.Goroutines <= 0 || whole.Pauses.Count == 0 {
		t.Fatalf("the capture lacks what the look reads: %+v", whole)
	}
	if diff := cmp.Diff(whole, read(lookFamilies)); diff != "" {
		t.Errorf("lookFamilies (-whole /metrics +look):\n%s", diff)
	}
	if got := read(model.StartFamily()).Start; got != whole.Start {
		t.Errorf("startFamily: process start %v, want %v", got, whole.Start)
	}
}
