package live

import (
	"context"
	"strings"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/english"
	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
)

// When the one listed instance does not answer on its own address (behind
// a load balancer, the addresses are often private), Run reads through
// the kubeconfig host over one connection, says so, and notices when one
// sample's fetches reached two processes; the note points at the caller's
// way to pin instances. (Two or more live instances are each searched for:
// balancer_test.go.)
func TestRunFallsBackThroughTheBalancer(t *testing.T) {
	t.Parallel()
	lb := fakeapiserver.Start(t, golden.Fixture("t2"))
	lb.Endpoints = []string{"127.0.0.1:1"} // nothing listens there
	// The balancer sends the sample's /metrics and the identity probe
	// after its first fetch to two different processes.
	lb.ProcessStart = []float64{1764410000, 1764420000}
	var progress strings.Builder
	cfg := model.Config{REST: fakeapiserver.RESTConfig(t, lb, fakeapiserver.TokenAdmin), Samples: 1, RequestTimeout: 10 * time.Second, Clock: testingclock.NewFakeClock(time.Now()), Force: true,
		Progress: &progress, Words: english.Words{APIServers: "--apiserver"}}
	res, err := Run(context.Background(), cfg, NewCaptures())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Instances) != 1 {
		t.Fatalf("instances %+v, want the kubeconfig host alone", res.Instances)
	}
	ir := res.Instances[0]
	if ir.Instance.Pinned || ir.Instance.Name != lb.Address() || len(ir.Errors) != 0 {
		t.Errorf("instance %+v, errors %v; want the unpinned kubeconfig host", ir.Instance, ir.Errors)
	}
	notes := strings.Join(res.Notes, "\n")
	for _, want := range []string{"none of the 1 API server instances is reachable directly", "reading through the kubeconfig host " + lb.Address(), "instance 127.0.0.1:1 not read directly"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q lack %q", res.Notes, want)
		}
	}
	mixed := ir.Samples[0].Mixed
	if !strings.Contains(mixed, "reached different API server processes (process_start_time_seconds 1764410000.00, then 1764420000.00 after GET /debug/api_priority_and_fairness/dump_requests?includeRequestDetails=1)") || !strings.HasSuffix(mixed, "; pin instances with --apiserver") {
		t.Errorf("sample's Mixed = %q", mixed)
	}
	if !strings.Contains(progress.String(), mixed) {
		t.Errorf("progress %q does not say it", progress.String())
	}

	// Without a hint, the note ends with what was seen. The first run
	// read /metrics three times: the sample's, the check's, and the cost
	// read after the last fetch.
	cfg.Words, cfg.Progress = english.Words{}, nil
	lb.ProcessStart = []float64{1764410000, 1764420000, 1764420000, 1764410000, 1764420000}
	res, err = Run(context.Background(), cfg, NewCaptures())
	if err != nil {
		t.Fatal(err)
	}
	if m := res.Instances[0].Samples[0].Mixed; m == "" || strings.Contains(m, "pin instances") {
		t.Errorf("Mixed without a hint = %q", m)
	}
}
