package live

import (
	"context"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/internal/live/discovery"
)

// Where each process's /metrics names its identity lease, the instances
// reached through the balancer carry it, and the one not reached is named.
func TestRunThroughTheBalancerNamesTheLeaseNotReached(t *testing.T) {
	t.Parallel()
	servers, _, cfg := haBehindBalancer(t, 2, func(int) int { return 0 })
	for i, s := range servers {
		line := `apiserver_encryption_config_controller_automatic_reloads_total{apiserver_id_hash="` + discovery.LeaseHash("apiserver-"+string(rune('a'+i))) + `",status="success"} 1` + "\n"
		s.Captures = []string{fakeapiserver.EditCapture(t, golden.Fixture("t2"), func(name string, b []byte) []byte {
			if name == "metrics.txt" {
				return append(b, line...)
			}
			return b
		})}
	}
	cfg.Balancer.Connections = 3
	res, err := Run(context.Background(), cfg, NewCaptures())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Instances) != 1 || res.Instances[0].Instance.Lease != "cp-a" {
		t.Fatalf("instances %+v, want the one holding cp-a's lease", res.Instances)
	}
	if got, want := res.Coverage.Text(), "1 of 2 instances read (identity leases) through the load balancer after 3 connection(s); not reached: cp-b"; got != want {
		t.Errorf("coverage %q, want %q", got, want)
	}
}
