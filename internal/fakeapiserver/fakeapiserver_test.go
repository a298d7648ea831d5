package fakeapiserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// get requests path from s with token, returning the status and body.
func get(t *testing.T, s *Server, token, path string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func fixtureFile(t *testing.T, capture, name string) string {
	t.Helper()
	b, err := os.ReadFile(golden.Fixture(capture, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestTokensAndRules: no token is 401; the no-debug user reads /version
// only, as kube-apiserver's default RBAC for an authenticated user allows.
func TestTokensAndRules(t *testing.T) {
	s := Start(t, golden.Fixture("t1"))
	tests := []struct {
		token, path string
		want        int
	}{
		{"", "/version", http.StatusUnauthorized},
		{"wrong", "/metrics", http.StatusUnauthorized},
		{TokenNoDebug, "/version", http.StatusOK},
		{TokenNoDebug, "/metrics", http.StatusForbidden},
		{TokenNoDebug, "/debug/pprof/goroutine?debug=2", http.StatusForbidden},
		{TokenNoDebug, DiscoveryPath, http.StatusForbidden},
		{TokenAdmin, "/version", http.StatusOK},
		{TokenAdmin, "/debug/api_priority_and_fairness/dump_requests", http.StatusOK},
		{TokenAdmin, "/nowhere", http.StatusNotFound},
	}
	for _, tc := range tests {
		if got, body := get(t, s, tc.token, tc.path); got != tc.want {
			t.Errorf("GET %s as %q: %d, want %d (%s)", tc.path, tc.token, got, tc.want, body)
		}
	}
	want := []string{}
	for _, tc := range tests {
		want = append(want, tc.path)
	}
	if diff := cmp.Diff(want, s.Requests()); diff != "" {
		t.Errorf("Requests (-want +got):\n%s", diff)
	}
}

// TestEachMetricsReadStartsASample: the n-th /metrics switches to the n-th
// capture, and the other files follow the sample whose /metrics was read
// last; ProcessStart rewrites process_start_time_seconds per sample.
func TestEachMetricsReadStartsASample(t *testing.T) {
	s := Start(t, golden.Fixture("t1"), golden.Fixture("t2"))
	s.ProcessStart = []float64{100, 200}
	if _, b := get(t, s, TokenAdmin, "/debug/pprof/goroutine?debug=2"); b != fixtureFile(t, "t1", "goroutine-debug2.txt") {
		t.Errorf("before any /metrics: not t1's dump")
	}
	for i, c := range []string{"t1", "t2", "t2"} {
		_, m := get(t, s, TokenAdmin, "/metrics")
		want := []string{"process_start_time_seconds 1e+02", "process_start_time_seconds 2e+02", "process_start_time_seconds 2e+02"}[i]
		if !strings.Contains(m, "\n"+want+"\n") {
			t.Errorf("sample %d: /metrics has no line %q", i+1, want)
		}
		if _, b := get(t, s, TokenAdmin, "/debug/api_priority_and_fairness/dump_requests"); b != fixtureFile(t, c, "apf-requests.txt") {
			t.Errorf("sample %d: dump_requests is not %s's", i+1, c)
		}
	}
}

// TestDiscoveryListsTheEndpoints: the EndpointSlices of default/kubernetes
// name each endpoint's address and port.
func TestDiscoveryListsTheEndpoints(t *testing.T) {
	s := Start(t, golden.Fixture("t1"))
	s.Endpoints = []string{"127.0.0.1:6443", "127.0.0.2:7443"}
	code, body := get(t, s, TokenAdmin, DiscoveryPath)
	if code != http.StatusOK {
		t.Fatalf("discovery: %d %s", code, body)
	}
	var list struct {
		Items []struct {
			Endpoints []struct{ Addresses []string }
			Ports     []struct{ Port int }
		}
	}
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range list.Items {
		got = append(got, net.JoinHostPort(it.Endpoints[0].Addresses[0], strconv.Itoa(it.Ports[0].Port)))
	}
	if diff := cmp.Diff(s.Endpoints, got); diff != "" {
		t.Errorf("endpoints (-want +got):\n%s", diff)
	}
}

// TestServerModes: the switches that make the server fail as real ones do.
func TestServerModes(t *testing.T) {
	tests := []struct {
		name string
		set  func(*Server)
		path string
		want int
	}{
		{"no profiling", func(s *Server) { s.NoProfiling = true }, "/debug/pprof/goroutine?debug=1", http.StatusNotFound},
		{"profiling forbidden", func(s *Server) { s.ForbidProfiling = true }, "/debug/pprof/goroutine?debug=2", http.StatusForbidden},
		{"profiling forbidden, APF served", func(s *Server) { s.ForbidProfiling = true }, "/debug/api_priority_and_fairness/dump_requests", http.StatusOK},
		{"fail", func(s *Server) { s.Fail = true }, "/version", http.StatusInternalServerError},
		{"fail metrics", func(s *Server) { s.FailMetrics = true }, "/metrics", http.StatusInternalServerError},
		{"path prefix, outside", func(s *Server) { s.PathPrefix = "/k8s/clusters/c-1" }, "/version", http.StatusNotFound},
		{"path prefix, inside", func(s *Server) { s.PathPrefix = "/k8s/clusters/c-1" }, "/k8s/clusters/c-1/version", http.StatusOK},
		{"no trace", func(*Server) {}, "/debug/pprof/trace?seconds=1", http.StatusNotFound},
		{"trace body", func(s *Server) { s.TraceBody = []byte("go 1.26 trace\x00\x00\x00") }, "/debug/pprof/trace?seconds=1", http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := Start(t, golden.Fixture("t1"))
			tc.set(s)
			if got, body := get(t, s, TokenAdmin, tc.path); got != tc.want {
				t.Errorf("GET %s: %d, want %d (%s)", tc.path, got, tc.want, body)
			}
		})
	}
}

// errorsOf records the errors a helper reports, instead of failing the
// test that runs it.
type errorsOf struct {
	testing.TB
	said []string
}

func (e *errorsOf) Errorf(format string, args ...any) {
	e.said = append(e.said, fmt.Sprintf(format, args...))
}

// TestNoWaitClockFailsAWait: a wait on NoWaitClock is a test failure
// naming the wait, and returns at once with the clock's time.
func TestNoWaitClockFailsAWait(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC)
	rec := &errorsOf{TB: t}
	c := NoWaitClock{FakeClock: testingclock.NewFakeClock(now), T: rec}
	select {
	case got := <-c.After(70 * time.Second):
		if !got.Equal(now) {
			t.Errorf("After sent %v, want the clock's %v", got, now)
		}
	default:
		t.Fatal("After did not return at once")
	}
	if want := []string{"waited 1m10s for the next sample although every instance failed its first"}; !cmp.Equal(want, rec.said) {
		t.Errorf("reported %q, want %q", rec.said, want)
	}
}
