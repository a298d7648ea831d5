package fakeapiserver

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// clientOf is an HTTP client with a transport of its own (its own
// connections) trusting s's certificate, which every fake server shares.
func clientOf(s *Server) *http.Client {
	pool := x509.NewCertPool()
	pool.AddCert(s.Certificate())
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

// getAs GETs url with c as the admin, reading the answer whole.
func getAs(t *testing.T, c *http.Client, url string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+TokenAdmin)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// Each connection through the balancer stays on the backend it was sent
// to; a new connection goes to the next.
func TestBalancerKeepsAConnectionOnOneBackend(t *testing.T) {
	t.Parallel()
	a := Start(t, golden.Fixture("t2"))
	b := Start(t, golden.Fixture("t2"))
	lb := StartBalancer(t, RoundRobin(2), a, b)
	newClient := func() *http.Client { return clientOf(a) }
	get := func(c *http.Client) {
		t.Helper()
		getAs(t, c, lb.URL()+"/version")
	}
	first := newClient()
	get(first)
	get(first)
	if len(a.Requests()) != 2 || len(b.Requests()) != 0 || lb.Connections() != 1 {
		t.Fatalf("one connection: a got %q, b got %q, %d connections", a.Requests(), b.Requests(), lb.Connections())
	}
	get(newClient())
	if len(b.Requests()) != 1 || lb.Connections() != 2 {
		t.Errorf("a second connection: b got %q, %d connections", b.Requests(), lb.Connections())
	}
	// Dropped, the first client dials again: the third connection, to a.
	lb.Drop()
	first.CloseIdleConnections()
	get(first)
	if len(a.Requests()) != 3 || lb.Connections() != 3 {
		t.Errorf("after the drop: a got %q, %d connections", a.Requests(), lb.Connections())
	}
}

// The L7 balancer answers each request, not each connection, from a
// backend: a connection's first request of a path goes to the backend of
// its ordinal, each later one of the same path to the next.
func TestL7BalancerSpreadsAConnectionsRequests(t *testing.T) {
	t.Parallel()
	a := Start(t, golden.Fixture("t2"))
	b := Start(t, golden.Fixture("t2"))
	lb := StartL7Balancer(t, a, b)
	newClient := func() *http.Client { return clientOf(a) }
	get := func(c *http.Client, path string) {
		t.Helper()
		getAs(t, c, lb.URL+path)
	}
	first := newClient()
	get(first, "/metrics")
	get(first, "/version")
	get(first, "/metrics")
	if diff := cmp.Diff([]string{"/metrics", "/version"}, a.Requests()); diff != "" {
		t.Errorf("backend a after one connection (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"/metrics"}, b.Requests()); diff != "" {
		t.Errorf("backend b after one connection (-want +got):\n%s", diff)
	}
	// A second connection starts one backend further.
	get(newClient(), "/version")
	if got := b.Requests(); len(got) != 2 || got[1] != "/version" {
		t.Errorf("backend b after a second connection: %q, want its /version", got)
	}
	if got := lb.Requests(); got != 4 {
		t.Errorf("the balancer proxied %d requests, want 4", got)
	}
}

// The L7 balancer's routes: Spread answers each later request of a path
// from the next backend; ByPath keeps every /metrics of a connection on
// its backend and sends every other path to the next.
func TestL7BalancerRoutes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		route L7Route
		// want is which backend answered each request of paths.
		want []int
	}{
		{"Spread", Spread, []int{0, 0, 1, 1}},
		{"ByPath", ByPath, []int{0, 1, 0, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			backends := []*Server{Start(t, golden.Fixture("t2")), Start(t, golden.Fixture("t2"))}
			lb := StartL7BalancerRouted(t, tc.route, backends...)
			c := lb.Client()
			paths := []string{"/metrics", "/debug/api_priority_and_fairness/dump_requests", "/metrics", "/debug/api_priority_and_fairness/dump_requests"}
			before := make([]int, len(backends))
			for i, p := range paths {
				getAs(t, c, lb.URL+p)
				got := -1
				for j, s := range backends {
					if len(s.Requests()) > before[j] {
						got, before[j] = j, len(s.Requests())
					}
				}
				if got != tc.want[i] {
					t.Errorf("request %d (%s): answered by backend %d, want %d", i+1, p, got, tc.want[i])
				}
			}
		})
	}
}
