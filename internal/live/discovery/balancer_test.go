package discovery

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// When the instances discovered do not answer on their own addresses,
// the notes say so, why, and name each one not read directly.
func TestUnpinnedNotes(t *testing.T) {
	t.Parallel()
	results := []model.InstanceResult{
		{Instance: model.Instance{Name: "10.0.0.1:6443", Pinned: true}, Errors: []error{errors.New("10.0.0.1:6443: connection refused")}},
		{Instance: model.Instance{Name: "10.0.0.2:6443", Pinned: true}},
	}
	want := []string{
		"none of the 2 API server instances is reachable directly (10.0.0.1:6443: connection refused); reading through the kubeconfig host lb:443, one connection per instance, told apart by process_start_time_seconds",
		"instance 10.0.0.1:6443 not read directly",
		"instance 10.0.0.2:6443 not read directly",
	}
	if diff := cmp.Diff(want, unpinnedNotes(results, "lb:443")); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
	if got := unpinnedNotes([]model.InstanceResult{{Instance: model.Instance{Name: "lb:443"}}}, "lb:443"); got != nil {
		t.Errorf("notes of instances not discovered as pinned: %q, want none", got)
	}
}

// behindBalancer starts n fake instances, each a process of its own (its
// process_start_time_seconds), behind an L4 balancer choosing with pick.
// Every instance answers the identity Leases list: n leases, live.
func behindBalancer(t *testing.T, n int, pick func(int) int) ([]*fakeapiserver.Server, *fakeapiserver.Balancer, model.Config) {
	t.Helper()
	now := time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC)
	var leases []fakeapiserver.Lease
	for i := 0; i < n; i++ {
		leases = append(leases, fakeapiserver.Lease{Name: "apiserver-" + string(rune('a'+i)), Hostname: "cp-" + string(rune('a'+i)), Holder: "apiserver-x_uuid", Renewed: now.Add(-10 * time.Second), DurationSeconds: 3600})
	}
	var servers []*fakeapiserver.Server
	for i := 0; i < n; i++ {
		s := fakeapiserver.Start(t, golden.Fixture("t2"))
		s.ProcessStart = []float64{1764410000 + float64(i)}
		s.Leases = leases
		servers = append(servers, s)
	}
	lb := fakeapiserver.StartBalancer(t, pick, servers...)
	cfg := model.Config{REST: fakeapiserver.RESTConfigAt(t, servers[0], lb.URL(), fakeapiserver.TokenAdmin), Samples: 1, RequestTimeout: 10 * time.Second, Clock: testingclock.NewFakeClock(now)}
	return servers, lb, cfg
}

// searched is what ThroughBalancer returned, and the live instances it
// was asked for.
type searched struct {
	clients []*model.Client
	results []model.InstanceResult
	notes   []string
	run     BalancerRun
	live    liveInstances
}

// search does what a run does when n discovered instances do not answer
// on their own addresses: it counts the live instances (one connection,
// the Leases list) and searches for them through the balancer.
func search(t *testing.T, cfg model.Config, n int) searched {
	t.Helper()
	var endpoints []model.Instance
	var failed []model.InstanceResult
	for i := 0; i < n; i++ {
		inst := model.Instance{Name: "127.0.0.1:" + string(rune('1'+i)), Address: "127.0.0.1:" + string(rune('1'+i)), Pinned: true}
		endpoints = append(endpoints, inst)
		failed = append(failed, model.InstanceResult{Instance: inst, Errors: []error{errors.New("connection refused")}})
	}
	var s searched
	var err error
	s.live, _ = CountLive(context.Background(), cfg.REST, endpoints, cfg.Clock.Now())
	s.clients, s.results, s.notes, s.run, err = ThroughBalancer(context.Background(), cfg, failed, s.live)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// readCoverage is the coverage of results once each was read, as a
// sample of it reads it (one fetch answered).
func readCoverage(s searched) api.InstanceCoverage {
	read := append([]model.InstanceResult(nil), s.results...)
	for i := range read {
		read[i].Samples = []api.Sample{{Fetches: []api.FetchInfo{{Kind: api.FileMetrics}}}}
	}
	return Coverage(read, s.live, &s.run)
}

// Behind an L4 balancer whose instances' own addresses do not answer,
// every live process is reached through the kubeconfig host, one
// connection each, told apart by its start, and the notes say why.
func TestThroughBalancerReachesEveryProcess(t *testing.T) {
	t.Parallel()
	_, lb, cfg := behindBalancer(t, 3, fakeapiserver.RoundRobin(3))
	s := search(t, cfg, 3)
	if len(s.clients) != 3 || len(s.results) != 3 {
		t.Fatalf("%d clients, %d results; want 3", len(s.clients), len(s.results))
	}
	starts := map[float64]bool{}
	for i, c := range s.clients {
		if c.Conn == nil || c.Conn.Ledger == nil || c.Conn.Redialed() {
			t.Fatalf("client %d: %+v, want a verified connection of its own, on the shared ledger", i, c.Conn)
		}
		starts[c.Conn.Process.Start] = true
		if r := s.results[i]; r.Instance.Pinned || r.Meter.ExtraBytes == 0 {
			t.Errorf("result %d: %+v, want unpinned, the search's read counted", i, r)
		}
	}
	if len(starts) != 3 {
		t.Errorf("processes kept %v, want 3 different", starts)
	}
	if len(s.notes) != 4 || !strings.HasPrefix(s.notes[0], "none of the 3 API server instances is reachable directly (connection refused); reading through the kubeconfig host ") {
		t.Errorf("notes %q, want why and each instance not read directly", s.notes)
	}
	want := api.InstanceCoverage{Read: 3, Live: 3, Source: api.LiveFromLeases, LiveNames: []string{"cp-a", "cp-b", "cp-c"}, ThroughBalancer: true, Connections: 3}
	if diff := cmp.Diff(want, readCoverage(s)); diff != "" {
		t.Errorf("coverage (-want +got):\n%s", diff)
	}
	// The Leases list took one connection, each process one more.
	if got := lb.Connections(); got != 4 {
		t.Errorf("the balancer accepted %d connections, want 4", got)
	}
}

// A balancer that keeps sending new connections to one instance: the
// search stops at the bound, and the coverage says 1 of 2 and which were
// live.
func TestThroughBalancerStopsAtTheBound(t *testing.T) {
	t.Parallel()
	servers, _, cfg := behindBalancer(t, 2, func(int) int { return 0 })
	cfg.Balancer.Connections = 5
	s := search(t, cfg, 2)
	if len(s.results) != 1 || len(servers[1].Requests()) != 0 {
		t.Fatalf("results %+v, want the one the balancer sends to", s.results)
	}
	c := readCoverage(s)
	if c.Read != 1 || c.Live != 2 || c.Connections != 5 || c.Complete() {
		t.Errorf("coverage %+v, want 1 of 2 after 5 connections", c)
	}
	if got, want := c.Text(), "1 of 2 instances read (identity leases) through the load balancer after 5 connection(s); not reached: 1 of the 2 live (cp-a, cp-b)"; got != want {
		t.Errorf("coverage text %q, want %q", got, want)
	}
}

// Without /metrics no process can be told apart: the search keeps the
// first connection as a plain client, says why, and there is no process
// to find again.
func TestThroughBalancerWithoutMetrics(t *testing.T) {
	t.Parallel()
	servers, _, cfg := behindBalancer(t, 2, fakeapiserver.RoundRobin(2))
	for _, s := range servers {
		s.FailMetrics = true
	}
	s := search(t, cfg, 2)
	if len(s.clients) != 1 || s.clients[0].Conn != nil {
		t.Fatalf("clients %+v, want one plain client", s.clients)
	}
	if !strings.Contains(strings.Join(s.notes, "\n"), "cannot tell the API server processes apart through the kubeconfig host: ") {
		t.Errorf("notes %q do not say why", s.notes)
	}
	if err := SameProcess(context.Background(), cfg, s.clients[0], &s.results[0], true); err != nil {
		t.Errorf("SameProcess = %v: no process was kept to find again", err)
	}
	if c := readCoverage(s); c.Read != 1 || c.Live != 2 || c.Connections != 1 {
		t.Errorf("coverage %+v, want 1 of 2 after 1 connection", c)
	}
}

// With fewer than two live instances there is nothing to tell apart: one
// plain client through the kubeconfig host, and a note that a balancer
// may still spread its requests.
func TestThroughBalancerOneLiveInstance(t *testing.T) {
	t.Parallel()
	_, lb, cfg := behindBalancer(t, 1, fakeapiserver.RoundRobin(1))
	s := search(t, cfg, 1)
	if len(s.clients) != 1 || s.clients[0].Conn != nil || s.run != (BalancerRun{Connections: 1, Bound: 1}) {
		t.Fatalf("clients %+v, run %+v; want one plain client, one connection", s.clients, s.run)
	}
	if len(s.notes) != 2 || !strings.HasSuffix(s.notes[0], "where a load balancer may answer each request from a different server") {
		t.Errorf("notes %q", s.notes)
	}
	if got := lb.Connections(); got != 1 {
		t.Errorf("the balancer accepted %d connections, want the Leases list's alone", got)
	}
}

// When the connections close between samples, the transport dials again
// and the balancer may answer from another process: SameProcess opens
// connections until it reaches the process read before, and fails naming
// it when the bound is hit first.
func TestSameProcessFindsTheProcessAgain(t *testing.T) {
	t.Parallel()
	// The list and the search take connections 0 to 3 in turn; after the
	// drop, the balancer turns one further, so that each client's next
	// connection reaches another process first.
	_, lb, cfg := behindBalancer(t, 3, func(n int) int {
		if n < 4 {
			return n % 3
		}
		return (n + 1) % 3
	})
	s := search(t, cfg, 3)
	lb.Drop()
	for i, c := range s.clients {
		before := s.results[i].Meter.ExtraBytes
		if err := SameProcess(context.Background(), cfg, c, &s.results[i], true); err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
		if s.results[i].Meter.ExtraBytes <= before || c.Conn.Redialed() {
			t.Errorf("client %d: the check's read not counted (%d bytes, %d before) or the connection not verified", i, s.results[i].Meter.ExtraBytes, before)
		}
	}
	// 4 before the drop, one per client after it, and more where a
	// connection reached another process first.
	if got := lb.Connections(); got <= 4+3 {
		t.Errorf("the balancer accepted %d connections, want more than 7: no process was searched for again", got)
	}

	// Once the balancer sends every connection to the first process, the
	// second is not found again within the bound.
	_, lb, cfg = behindBalancer(t, 2, func(n int) int {
		if n < 3 {
			return n % 2
		}
		return 0
	})
	cfg.Balancer.Connections = 3
	s = search(t, cfg, 2)
	lb.Drop()
	err := SameProcess(context.Background(), cfg, s.clients[1], &s.results[1], true)
	if err == nil || !strings.Contains(err.Error(), "(process_start_time_seconds 1764410001.00) was not found again through the load balancer after 3 connection(s) (the last reached process_start_time_seconds 1764410000.00)") {
		t.Errorf("SameProcess = %v, want the process not found again after 3 connections", err)
	}
}
