package exporter

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
)

// behindBalancer starts three fake instances, each a process of its own,
// behind an L4 balancer whose n-th connection goes to pick(n); their own
// addresses (listed by the EndpointSlices) do not answer, and three
// identity leases are live. It returns an exporter reading the balancer.
func behindBalancer(t *testing.T, pick func(n int) int) (*Exporter, string) {
	t.Helper()
	var servers []*fakeapiserver.Server
	for i := range 3 {
		s := fakeapiserver.Start(t, filepath.Join(seedRepro, "t1"))
		s.ProcessStart = []float64{1764410000 + float64(i)}
		s.Endpoints = []string{"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"}
		for j := range 3 {
			s.Leases = append(s.Leases, fakeapiserver.Lease{Name: fmt.Sprintf("apiserver-%d", j), Hostname: fmt.Sprintf("cp-%d", j), Renewed: lookedAt.Add(-10 * time.Second), DurationSeconds: 3600})
		}
		servers = append(servers, s)
	}
	lb := fakeapiserver.StartBalancer(t, pick, servers...)
	e, err := New(Config{
		Live:     model.Config{REST: fakeapiserver.RESTConfigAt(t, servers[0], lb.URL(), fakeapiserver.TokenAdmin), RequestTimeout: 10 * time.Second},
		Interval: 30 * time.Second, Clock: testingclock.NewFakeClock(lookedAt),
		Logger: slog.New(slog.DiscardHandler), Rand: func() float64 { return 0.5 },
	})
	if err != nil {
		t.Fatal(err)
	}
	return e, strings.TrimPrefix(lb.URL(), "https://")
}

// seriesBy lists, per metric of names, the apiserver label values the
// exporter's registry has.
func seriesBy(t *testing.T, e *Exporter, names ...string) map[string][]string {
	t.Helper()
	mfs, err := e.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, mf := range mfs {
		if !slices.Contains(names, mf.GetName()) {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "apiserver" && !slices.Contains(out[mf.GetName()], l.GetValue()) {
					out[mf.GetName()] = append(out[mf.GetName()], l.GetValue())
				}
			}
		}
		slices.Sort(out[mf.GetName()])
	}
	return out
}

// Through a load balancer, serve exports series for every instance, under
// the same apiserver labels at two looks even though the balancer reaches
// the instances in another order, and the coverage: 3 of 3 through the
// load balancer.
func TestServeThroughTheBalancerKeepsEachInstancesLabels(t *testing.T) {
	t.Parallel()
	// The first look's connections reach the instances in turn; from the
	// second look on, in the reverse turn.
	var reverse atomic.Bool
	e, lb := behindBalancer(t, func(n int) int {
		if reverse.Load() {
			return 2 - n%3
		}
		return n % 3
	})
	names := []string{"watchdoctor_last_look_success", "watchdoctor_initializing_watches", "watchdoctor_user_oldest_initializing_age_seconds", "watchdoctor_watches_by_state"}
	var looks []map[string][]string
	for i := range 2 {
		reverse.Store(i == 1)
		if !e.LookOnce(context.Background()) {
			t.Fatalf("look %d read nothing", i+1)
		}
		looks = append(looks, seriesBy(t, e, names...))
	}
	want := []string{lb + "#started-1764410000.00", lb + "#started-1764410001.00", lb + "#started-1764410002.00"}
	for _, n := range names {
		if diff := cmp.Diff(want, looks[0][n]); diff != "" {
			t.Errorf("%s at the first look (-want +got):\n%s", n, diff)
		}
	}
	if diff := cmp.Diff(looks[0], looks[1]); diff != "" {
		t.Errorf("the labels changed between the looks (-first +second):\n%s", diff)
	}
	checkCoverage(t, e, lb, 3, 3)
}

// A balancer that sends every connection to one instance: serve reads 1
// of the 3 live, which the coverage gauges say (the alert's input).
func TestServeThroughTheBalancerSaysAnInstanceNotRead(t *testing.T) {
	t.Parallel()
	e, lb := behindBalancer(t, func(int) int { return 0 })
	if !e.LookOnce(context.Background()) {
		t.Fatal("the look read nothing")
	}
	checkCoverage(t, e, lb, 3, 1)
}

// On its own address, the instance is read by route own_address; the
// live count is the EndpointSlices' where no lease is listed. A look
// that finds no instance reads 0 and keeps the live count.
func TestServeCoverageOnOwnAddresses(t *testing.T) {
	t.Parallel()
	e, s, _, _ := newTest(t, fakeapiserver.TokenAdmin, filepath.Join(seedRepro, "t1"))
	if !e.LookOnce(context.Background()) {
		t.Fatal("the look read nothing")
	}
	want := func(read int) string {
		return fmt.Sprintf(`
# HELP watchdoctor_live_instances API server instances the cluster runs (its live identity leases, or the ready endpoints of default/kubernetes when more), at the last look; absent when unknown.
# TYPE watchdoctor_live_instances gauge
watchdoctor_live_instances{apiserver=%[1]q} 1
# HELP watchdoctor_read_instances API server instances the last look read, each a process of its own, by route: own_address, or load_balancer (through the kubeconfig host, one connection per instance).
# TYPE watchdoctor_read_instances gauge
watchdoctor_read_instances{apiserver=%[1]q,route="own_address"} %[2]d
`, s.Address(), read)
	}
	if err := testutil.GatherAndCompare(e.Registry(), strings.NewReader(want(1)), "watchdoctor_live_instances", "watchdoctor_read_instances"); err != nil {
		t.Error(err)
	}
	s.Close()
	if e.LookOnce(context.Background()) {
		t.Fatal("a look of a closed server counted as ok")
	}
	if err := testutil.GatherAndCompare(e.Registry(), strings.NewReader(want(0)), "watchdoctor_live_instances", "watchdoctor_read_instances"); err != nil {
		t.Error(err)
	}
}

// checkCoverage compares the coverage gauges of e's registry with live
// instances of the cluster at lb, read read through the load balancer.
func checkCoverage(t *testing.T, e *Exporter, lb string, live, read int) {
	t.Helper()
	cov := fmt.Sprintf(`
# HELP watchdoctor_live_instances API server instances the cluster runs (its live identity leases, or the ready endpoints of default/kubernetes when more), at the last look; absent when unknown.
# TYPE watchdoctor_live_instances gauge
watchdoctor_live_instances{apiserver=%[1]q} %[2]d
# HELP watchdoctor_read_instances API server instances the last look read, each a process of its own, by route: own_address, or load_balancer (through the kubeconfig host, one connection per instance).
# TYPE watchdoctor_read_instances gauge
watchdoctor_read_instances{apiserver=%[1]q,route="load_balancer"} %[3]d
`, lb, live, read)
	if err := testutil.GatherAndCompare(e.Registry(), strings.NewReader(cov), "watchdoctor_live_instances", "watchdoctor_read_instances"); err != nil {
		t.Error(err)
	}
}
