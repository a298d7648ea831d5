package live

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

func TestPinnedConfigVerifiesTheKubeconfigHostName(t *testing.T) {
	base := &rest.Config{Host: "https://api.example.com:6443", BearerToken: "t"}
	c, err := pinnedConfig(base, Instance{Name: "10.0.0.7:6443", Address: "10.0.0.7:6443", Pinned: true})
	if err != nil {
		t.Fatal(err)
	}
	if c.Host != "https://10.0.0.7:6443" || c.TLSClientConfig.ServerName != "api.example.com" || c.BearerToken != "t" {
		t.Errorf("pinned config: host %q, server name %q, token %q", c.Host, c.TLSClientConfig.ServerName, c.BearerToken)
	}
	if base.Host != "https://api.example.com:6443" || base.TLSClientConfig.ServerName != "" {
		t.Error("pinnedConfig changed the base config")
	}
	un, _ := pinnedConfig(base, Instance{Name: "api.example.com:6443"})
	if un.Host != base.Host {
		t.Errorf("an unpinned instance must keep the kubeconfig host, got %q", un.Host)
	}
}

func TestStatusErrors(t *testing.T) {
	forbidden := `{"kind":"Status","message":"forbidden: User \"x\" cannot get path \"/debug/pprof/goroutine\""}`
	for _, tc := range []struct {
		status int
		path   string
		body   string
		want   string
	}{
		{403, "/debug/pprof/goroutine", forbidden, `GET /debug/pprof/goroutine forbidden: missing RBAC rule nonResourceURLs: ["/debug/pprof/*"], verbs: ["get"] (forbidden: User "x"`},
		{403, "/metrics", "", `missing RBAC rule nonResourceURLs: ["/metrics"], verbs: ["get"]`},
		{404, "/debug/pprof/goroutine", "404 page not found", "profiling is disabled on this API server (--profiling=false)"},
		{404, "/debug/api_priority_and_fairness/dump_requests", "", "API Priority and Fairness is disabled"},
		{401, "/metrics", "", "the credentials of the kubeconfig were rejected"},
		{503, "/metrics", "<html>\nbusy", "HTTP 503: an HTML page, not a Kubernetes API answer"},
		{429, "/debug/pprof/goroutine", "Too many requests, please try again later.\n", "HTTP 429: API Priority and Fairness is rejecting requests at this priority level"},
	} {
		err := statusError("inst", tc.path, tc.status, []byte(tc.body))
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%d %s: %v, want %q", tc.status, tc.path, err, tc.want)
		}
		if IsForbidden(err) != (tc.status == 403) {
			t.Errorf("%d: IsForbidden = %v", tc.status, IsForbidden(err))
		}
	}
}

// recorder is a Target that keeps what it is handed.
type recorder struct{ kinds []string }

func (r *recorder) Store(instance string, sample int, kind api.FileKind, body io.Reader) error {
	if _, err := io.Copy(io.Discard, body); err != nil {
		return err
	}
	r.kinds = append(r.kinds, string(kind))
	return nil
}

func restConfig(t *testing.T, s *fakeapiserver.Server, token string) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", fakeapiserver.Kubeconfig(t, s, token))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestRunFetchOrderAndOnly(t *testing.T) {
	s := fakeapiserver.Start(t, golden.Fixture("t1"), golden.Fixture("t2"))
	clk := testingclock.NewFakeClock(time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC))
	cfg := Config{REST: restConfig(t, s, fakeapiserver.TokenAdmin), APIServers: []string{s.Address()}, Samples: 1, RequestTimeout: 10 * time.Second, Clock: clk, MaxGoroutines: 500000}
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
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	clk := signalClock{testingclock.NewFakeClock(time.Now()), make(chan struct{})}
	cfg := Config{REST: restConfig(t, s, fakeapiserver.TokenAdmin), APIServers: []string{s.Address()}, Samples: 2, Interval: time.Minute, RequestTimeout: 10 * time.Second, Clock: clk}
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

func TestMaxGoroutinesHoldsWhenMetricsCannotBeRead(t *testing.T) {
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	s.FailMetrics = true
	clk := testingclock.NewFakeClock(time.Now())
	cfg := Config{REST: restConfig(t, s, fakeapiserver.TokenAdmin), APIServers: []string{s.Address()}, Samples: 1, RequestTimeout: 10 * time.Second, Clock: clk, MaxGoroutines: 500000}
	res, err := Run(context.Background(), cfg, &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range s.Requests() {
		if strings.HasPrefix(p, "/debug/pprof/goroutine?debug=2") {
			t.Errorf("the dump was taken although go_goroutines is unknown: %s", p)
		}
	}
	var le *GoroutineLimitError
	if errs := res.Instances[0].Errors; len(errs) < 2 || !errors.As(errs[1], &le) {
		t.Errorf("errors = %v, want a *GoroutineLimitError second", errs)
	}
	cfg.Force = true
	if _, err := Run(context.Background(), cfg, &recorder{}); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range s.Requests() {
		found = found || strings.HasPrefix(p, "/debug/pprof/goroutine?debug=2")
	}
	if !found {
		t.Error("--force did not take the dump")
	}
}

func TestServerURLPathPrefixIsKept(t *testing.T) {
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	s.PathPrefix = "/k8s/clusters/c-abc"
	cfg := restConfig(t, s, fakeapiserver.TokenAdmin)
	cfg.Host += s.PathPrefix
	c, err := newClient(cfg, Instance{Name: "proxy"}, 10*time.Second, nil)
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
