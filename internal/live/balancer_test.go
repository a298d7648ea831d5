package live

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/english"
	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	"github.com/watch-doctor/watch-doctor/internal/live/tracefetch"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// haBehindBalancer starts n fake instances, each a process of its own
// (its process_start_time_seconds), behind an L4 balancer choosing with
// pick. The first instance also answers the lists: the EndpointSlices
// name addresses nothing listens on, and n identity leases are live.
func haBehindBalancer(t *testing.T, n int, pick func(int) int) ([]*fakeapiserver.Server, *fakeapiserver.Balancer, model.Config) {
	t.Helper()
	now := time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC)
	var servers []*fakeapiserver.Server
	for i := 0; i < n; i++ {
		s := fakeapiserver.Start(t, golden.Fixture("t2"))
		s.ProcessStart = []float64{1764410000 + float64(i)}
		servers = append(servers, s)
	}
	for i := 0; i < n; i++ {
		servers[0].Endpoints = append(servers[0].Endpoints, "127.0.0.1:"+string(rune('1'+i)))
		servers[0].Leases = append(servers[0].Leases, fakeapiserver.Lease{Name: "apiserver-" + string(rune('a'+i)), Hostname: "cp-" + string(rune('a'+i)), Holder: "apiserver-x_uuid", Renewed: now.Add(-10 * time.Second), DurationSeconds: 3600})
	}
	// Every list reaches servers[0], whatever the balancer picks.
	for _, s := range servers[1:] {
		s.Endpoints, s.Leases = servers[0].Endpoints, servers[0].Leases
	}
	lb := fakeapiserver.StartBalancer(t, pick, servers...)
	cfg := model.Config{REST: fakeapiserver.RESTConfigAt(t, servers[0], lb.URL(), fakeapiserver.TokenAdmin), Samples: 1, RequestTimeout: 10 * time.Second, Clock: testingclock.NewFakeClock(now), Force: true}
	return servers, lb, cfg
}

// dumpsServed counts the debug=2 dumps s served.
func dumpsServed(s *fakeapiserver.Server) int {
	return served(s, "/debug/pprof/goroutine?debug=2")
}

// Behind an L4 balancer whose instances' own addresses do not answer,
// every live instance is reached through the kubeconfig host, one
// connection each, and each is sampled whole over its own connection.
func TestRunReachesEveryInstanceThroughTheBalancer(t *testing.T) {
	t.Parallel()
	servers, lb, cfg := haBehindBalancer(t, 3, fakeapiserver.RoundRobin(3))
	res, err := Run(context.Background(), cfg, NewCaptures())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Instances) != 3 {
		t.Fatalf("%d instances read, want 3: %+v", len(res.Instances), res.Instances)
	}
	starts := map[float64]string{}
	for _, ir := range res.Instances {
		if ir.Failed() || ir.Instance.Pinned || len(ir.Samples) != 1 {
			t.Fatalf("instance %+v: errors %v", ir.Instance, ir.Errors)
		}
		if ir.Samples[0].Mixed != "" {
			t.Errorf("%s: sample mixed processes: %s", ir.Instance.Name, ir.Samples[0].Mixed)
		}
		starts[tracefetch.SampleStart(&ir)] = ir.Instance.Name
		// Over its own connection both /metrics reads of the cost are of
		// its process; the search's read is in the bytes.
		fetched := int64(0)
		for _, f := range ir.Samples[0].Fetches {
			fetched += f.Bytes
		}
		if ir.Cost == nil || !ir.Cost.PausesMeasured || ir.Cost.BytesRead < fetched+2*ir.Samples[0].Fetches[0].Bytes {
			t.Errorf("%s: cost %+v, want pauses measured and the search's and the last /metrics read counted beside %d bytes fetched", ir.Instance.Name, ir.Cost, fetched)
		}
	}
	if len(starts) != 3 {
		t.Errorf("processes read %v, want 3 different", starts)
	}
	for i, s := range servers {
		if n := dumpsServed(s); n != 1 {
			t.Errorf("server %d served %d goroutine dumps, want 1", i, n)
		}
	}
	want := api.InstanceCoverage{Read: 3, Live: 3, Source: api.LiveFromLeases, LiveNames: []string{"cp-a", "cp-b", "cp-c"}, ThroughBalancer: true, Connections: 3}
	if diff := cmp.Diff(want, res.Coverage); diff != "" {
		t.Errorf("coverage (-want +got):\n%s", diff)
	}
	// The lists took one connection, each instance one more.
	if got := lb.Connections(); got != 4 {
		t.Errorf("the balancer accepted %d connections, want 4", got)
	}
}

// dropClock closes every connection of the balancer while the run waits
// for the next sample, as an idle timeout does, then steps the clock.
type dropClock struct {
	*testingclock.FakeClock
	lb *fakeapiserver.Balancer
}

func (c dropClock) After(d time.Duration) <-chan time.Time {
	c.lb.Drop()
	ch := c.FakeClock.After(d)
	c.FakeClock.Step(d)
	return ch
}

// When the connections close between samples, the transport dials again
// and the balancer may answer from another process: the process read in
// sample 1 is found again before sample 2 is taken.
func TestRunFindsTheSameProcessAgain(t *testing.T) {
	t.Parallel()
	// The lists and the search take connections 0 to 3 in turn; after the
	// drop, the balancer turns one further, so that each instance's next
	// connection reaches another process first.
	servers, lb, cfg := haBehindBalancer(t, 3, func(n int) int {
		if n < 4 {
			return n % 3
		}
		return (n + 1) % 3
	})
	cfg.Samples, cfg.Interval, cfg.Parallel = 2, time.Minute, 1
	cfg.Clock = dropClock{FakeClock: cfg.Clock.(*testingclock.FakeClock), lb: lb}
	res, err := Run(context.Background(), cfg, NewCaptures())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Instances) != 3 {
		t.Fatalf("%d instances, want 3", len(res.Instances))
	}
	for _, ir := range res.Instances {
		if len(ir.Samples) != 2 || len(ir.Errors) != 0 {
			t.Fatalf("%s: %d samples, errors %v", ir.Instance.Name, len(ir.Samples), ir.Errors)
		}
		for _, n := range ir.Notes {
			if strings.Contains(n, "different process") {
				t.Errorf("%s: %s", ir.Instance.Name, n)
			}
		}
	}
	for i, s := range servers {
		if n := dumpsServed(s); n != 2 {
			t.Errorf("server %d served %d goroutine dumps, want 2 (one per sample of its own instance)", i, n)
		}
	}
	// 4 before the drop, one per instance after it, and more where a
	// connection reached another process first.
	if got := lb.Connections(); got <= 4+3 {
		t.Errorf("the balancer accepted %d connections, want more than 7: no process was searched for again", got)
	}
}

// A balancer that answers one connection's requests from different
// processes (L7) is said on the sample: it may mix instances.
func TestRunThroughAnL7BalancerSaysSo(t *testing.T) {
	t.Parallel()
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	now := time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC)
	s.Endpoints = []string{"127.0.0.1:1", "127.0.0.1:2"}
	s.Leases = []fakeapiserver.Lease{{Name: "apiserver-a", Hostname: "cp-a", Renewed: now, DurationSeconds: 3600}, {Name: "apiserver-b", Hostname: "cp-b", Renewed: now, DurationSeconds: 3600}}
	// The search's two connections read A then B; the first instance's
	// sample, over the connection kept for A, reads B.
	s.ProcessStart = []float64{1764410000, 1764420000, 1764420000}
	cfg := model.Config{REST: fakeapiserver.RESTConfig(t, s, fakeapiserver.TokenAdmin), Samples: 1, Parallel: 1, RequestTimeout: 10 * time.Second, Clock: testingclock.NewFakeClock(now), Force: true, Words: english.Words{APIServers: "--apiserver"}}
	res, err := Run(context.Background(), cfg, NewCaptures())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Instances) != 2 {
		t.Fatalf("%d instances, want 2", len(res.Instances))
	}
	want := "sample 1: /metrics came from process_start_time_seconds 1764420000.00, not 1764410000.00, the process this connection was kept for, over the same connection: the load balancer spreads one connection's requests over API server processes (an HTTP, L7, balancer)"
	if got := res.Instances[0].Notes; len(got) == 0 || !strings.HasPrefix(got[0], want) || !strings.HasSuffix(got[0], "; pin instances with --apiserver") {
		t.Errorf("notes %q, want the L7 balancer said", got)
	}
	if !strings.HasPrefix(res.Instances[0].Samples[0].Mixed, "sample 1: /metrics came from") {
		t.Errorf("sample not marked mixed: %q", res.Instances[0].Samples[0].Mixed)
	}
}

// Without /metrics no process can be told apart: the run reads through
// one connection, says why, and asks for nothing more of the search; and
// what it reads is tied to no process (pin.go): its samples are mixed,
// and no instance is counted read.
func TestRunThroughTheBalancerWithoutMetrics(t *testing.T) {
	t.Parallel()
	servers, lb, cfg := haBehindBalancer(t, 2, fakeapiserver.RoundRobin(2))
	for _, s := range servers {
		s.FailMetrics = true
	}
	cfg.Samples, cfg.Interval = 2, time.Minute
	cfg.Clock = dropClock{FakeClock: cfg.Clock.(*testingclock.FakeClock), lb: lb}
	res, err := Run(context.Background(), cfg, NewCaptures())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Instances) != 1 || len(res.Instances[0].Samples) != 2 {
		t.Fatalf("instances %+v, want one, sampled twice", res.Instances)
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "cannot tell the API server processes apart through the kubeconfig host: ") {
		t.Errorf("notes %q do not say why", res.Notes)
	}
	for _, err := range res.Instances[0].Errors {
		if strings.Contains(err.Error(), "not found again") {
			t.Errorf("error %v: no process was kept to find again", err)
		}
	}
	// Sample 2 may find the dropped connection closed and read nothing.
	if m := res.Instances[0].Samples[0].Mixed; !strings.Contains(m, "its /metrics named no API server process, so nothing read through the load balancer can be tied to one") {
		t.Errorf("sample 1: mixed %q, want it said that nothing can be tied to a process", m)
	}
	if c := res.Coverage; c.Read != 0 || c.Live != 2 || c.Connections != 1 {
		t.Errorf("coverage %+v, want 0 of 2 after 1 connection", c)
	}
}

// TestRunDumpsAProcessOnceThroughTheBalancer (issue 35): one process
// behind a balancer, 5,000 identity leases live, and a /metrics that
// names a new process start on each of the search's reads, so the search
// keeps as many connections as its bound allows (64 by default, here 8
// to keep the test short). Their samples all reach the one process: it
// gives one goroutine dump, not one per connection, and each other
// connection says why it took none.
func TestRunDumpsAProcessOnceThroughTheBalancer(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC)
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	s.Endpoints = []string{"127.0.0.1:1", "127.0.0.1:2"}
	for i := range 5000 {
		s.Leases = append(s.Leases, fakeapiserver.Lease{Name: fmt.Sprintf("apiserver-%d", i), Hostname: fmt.Sprintf("cp-%d", i), Renewed: now, DurationSeconds: 3600})
	}
	const bound = 8
	for i := range bound {
		s.ProcessStart = append(s.ProcessStart, 1764410000+float64(i))
	}
	s.ProcessStart = append(s.ProcessStart, 1764500000) // every read after the search's
	lb := fakeapiserver.StartBalancer(t, fakeapiserver.RoundRobin(1), s)
	cfg := model.Config{REST: fakeapiserver.RESTConfigAt(t, s, lb.URL(), fakeapiserver.TokenAdmin), Samples: 1, RequestTimeout: 10 * time.Second, Clock: testingclock.NewFakeClock(now), Force: true}
	cfg.Balancer.Connections = bound
	res, err := Run(context.Background(), cfg, NewCaptures())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Instances) != bound {
		t.Fatalf("%d instances kept, want the bound's %d: the test no longer makes one process look like many", len(res.Instances), bound)
	}
	if n := dumpsServed(s); n != 1 {
		t.Errorf("the one process served %d goroutine dumps, want 1", n)
	}
	said := 0
	for _, ir := range res.Instances {
		for _, n := range ir.Notes {
			if strings.Contains(n, "(process_start_time_seconds 1764500000.00): no goroutine dump or execution trace is taken of it again over this connection") {
				said++
			}
		}
	}
	if said != bound-1 {
		t.Errorf("%d instances say why they took no dump, want %d", said, bound-1)
	}
}
