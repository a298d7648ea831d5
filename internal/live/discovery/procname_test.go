package discovery

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/live/model"
)

func TestNameProcesses(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("h", 80)
	type proc struct {
		fp    model.Fingerprint
		lease string
	}
	for _, tc := range []struct {
		name  string
		procs []proc
		want  []string
	}{
		{"by lease, sorted", []proc{{model.Fingerprint{Start: 2}, "cp-b"}, {model.Fingerprint{Start: 1}, "cp-a"}}, []string{"lb:443#cp-a", "lb:443#cp-b"}},
		{"by id hash without a lease", []proc{{model.Fingerprint{Start: 1, IDHash: "sha256:0123456789abcdef"}, ""}}, []string{"lb:443#id-0123456789ab"}},
		{"by start time", []proc{{model.Fingerprint{Start: 1764410000.471}, ""}, {model.Fingerprint{Start: 1764410001}, ""}}, []string{"lb:443#started-1764410000.47", "lb:443#started-1764410001.00"}},
		{"a lease shared: its start time added", []proc{{model.Fingerprint{Start: 2}, "cp"}, {model.Fingerprint{Start: 1}, "cp"}}, []string{"lb:443#cp-started-1.00", "lb:443#cp-started-2.00"}},
		{"the same start to 10 ms: numbered", []proc{{model.Fingerprint{Start: 1.001, IDHash: "b"}, "cp"}, {model.Fingerprint{Start: 1.002, IDHash: "a"}, "cp"}}, []string{"lb:443#cp-started-1.00", "lb:443#cp-started-1.00-2"}},
		{"a long lease cut, kept distinct", []proc{{model.Fingerprint{Start: 1}, long}}, []string{"lb:443#" + boundKey(long)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var clients []*model.Client
			var out []model.InstanceResult
			for _, p := range tc.procs {
				clients = append(clients, &model.Client{Conn: &model.OwnConn{Process: p.fp}})
				out = append(out, model.InstanceResult{Instance: model.Instance{Name: "lb:443", Lease: p.lease}})
			}
			nameProcesses("lb:443", clients, out)
			var got []string
			for i, r := range out {
				got = append(got, r.Instance.Name)
				if clients[i].Inst.Name != r.Instance.Name {
					t.Errorf("client %d is named %q, its result %q", i, clients[i].Inst.Name, r.Instance.Name)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
		})
	}
	if k := boundKey(long); len(k) != maxProcessKey || k == boundKey(long+"x") {
		t.Errorf("boundKey(80 bytes) = %q: want %d bytes, distinct from another long key", k, maxProcessKey)
	}
}

// namesReached searches through a balancer of three instances choosing
// with pick and returns the names of the processes reached, each without
// the kubeconfig host it starts with.
func namesReached(t *testing.T, pick func(int) int, idHash bool) []string {
	t.Helper()
	servers, _, cfg := behindBalancer(t, 3, pick)
	if idHash {
		withIDLabel(t, servers, leaseHashOf)
	}
	var names []string
	for _, ir := range search(t, cfg, 3).results {
		key, ok := strings.CutPrefix(ir.Instance.Name, HostOf(cfg.REST.Host))
		if !ok {
			t.Errorf("%q does not start with the kubeconfig host %s", ir.Instance.Name, HostOf(cfg.REST.Host))
		}
		names = append(names, key)
	}
	return names
}

// Whatever order the balancer's connections reach the processes in, each
// is named the same: by its lease where its /metrics names one, else by
// its start time; every name starts with the kubeconfig host.
func TestNamesProcessesThroughTheBalancerStably(t *testing.T) {
	t.Parallel()
	// The Leases list takes connection 0; the search then reaches the
	// servers in the order 0, 1, 2, or 2, 1, 0.
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
