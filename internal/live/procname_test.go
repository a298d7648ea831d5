package live

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/internal/live/discovery"
)

// namesReached runs one read through a balancer of three instances
// choosing with pick and returns the names of the instances read, each
// without the kubeconfig host it starts with.
func namesReached(t *testing.T, pick func(int) int, idHash bool) []string {
	t.Helper()
	servers, _, cfg := haBehindBalancer(t, 3, pick)
	if idHash {
		for i, s := range servers {
			line := `apiserver_encryption_config_controller_automatic_reloads_total{apiserver_id_hash="` + discovery.LeaseHash("apiserver-"+string(rune('a'+i))) + `",status="success"} 1` + "\n"
			s.Captures = []string{fakeapiserver.EditCapture(t, golden.Fixture("t2"), func(name string, b []byte) []byte {
				if name == "metrics.txt" {
					return append(b, line...)
				}
				return b
			})}
		}
	}
	cfg.Force = false
	res, err := Run(context.Background(), cfg, NewCaptures())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ir := range res.Instances {
		if ir.Failed() {
			t.Fatalf("%s: %v", ir.Instance.Name, ir.Errors)
		}
		key, ok := strings.CutPrefix(ir.Instance.Name, discovery.HostOf(cfg.REST.Host))
		if !ok {
			t.Errorf("%q does not start with the kubeconfig host %s", ir.Instance.Name, discovery.HostOf(cfg.REST.Host))
		}
		names = append(names, key)
	}
	return names
}

// Whatever order the balancer's connections reach the processes in, each
// is named the same: by its lease where its /metrics names one, else by
// its start time; every name starts with the kubeconfig host.
func TestRunNamesProcessesThroughTheBalancerStably(t *testing.T) {
	t.Parallel()
	// The lists take connection 0; the search then reaches the servers in
	// the order 0, 1, 2, or 2, 1, 0.
	forward := func(n int) int { return max(n-1, 0) % 3 }
	backward := func(n int) int { return (5 - max(n-1, 0)) % 3 }
	for _, tc := range []struct {
		idHash bool
		want   []string
	}{
		{false, []string{"#started-1764410000.00", "#started-1764410001.00", "#started-1764410002.00"}},
		{true, []string{"#cp-a", "#cp-b", "#cp-c"}},
	} {
		a, b := namesReached(t, forward, tc.idHash), namesReached(t, backward, tc.idHash)
		if diff := cmp.Diff(a, b); diff != "" {
			t.Errorf("id hash %v: the names differ with the balancer's order (-forward +backward):\n%s", tc.idHash, diff)
		}
		if diff := cmp.Diff(tc.want, a); diff != "" {
			t.Errorf("id hash %v: names after the host (-want +got):\n%s", tc.idHash, diff)
		}
	}
}
