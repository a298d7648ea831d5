package discovery

import (
	"strings"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// TestIDHashOf: only "sha256:" and 64 lowercase hex digits is a hash;
// anything else (issue 35: ESC and U+202E in the value) counts as none.
func TestIDHashOf(t *testing.T) {
	t.Parallel()
	hash := LeaseHash("apiserver-a")
	line := func(v string) string {
		return `apiserver_authentication_config_controller_automatic_reloads_total{apiserver_id_hash="` + v + `",status="success"} 1` + "\n"
	}
	for _, tc := range []struct{ name, text, want string }{
		{"none", "go_goroutines 3\n", ""},
		{"kube-apiserver's", line(hash), hash},
		{"empty", line(""), ""},
		{"unterminated", `a{apiserver_id_hash="` + hash, ""},
		{"short", line("sha256:abc"), ""},
		{"63 digits", line(hash[:len(hash)-1]), ""},
		{"65 digits", line(hash + "0"), ""},
		{"uppercase", line("sha256:" + strings.ToUpper(hash[7:])), ""},
		{"other algorithm", line("sha512:" + hash[7:]), ""},
		{"no prefix", line(hash[7:] + "1234567"), ""},
		{"ESC and U+202E", line("sha256:" + hash[7:40] + "\x1b[31m\u202e" + hash[48:]), ""},
	} {
		if got := idHashOf([]byte(tc.text)); got != tc.want {
			t.Errorf("%s: idHashOf(%q) = %q, want %q", tc.name, tc.text, got, tc.want)
		}
	}
}

// The hash kube-apiserver labels its metrics with is the SHA-256 of its
// identity lease's name (printf apiserver-a | sha256sum).
func TestLeaseHash(t *testing.T) {
	t.Parallel()
	if got, want := LeaseHash("apiserver-a"), "sha256:b5b662adf0e40b9253722f985e321a40f8f9592881365a3ffc91fb56c54da2dc"; got != want {
		t.Errorf("leaseHash = %q, want %q", got, want)
	}
}

// withIDLabel makes each server's /metrics hold a series whose
// apiserver_id_hash label is label(i), as kube-apiserver's /metrics does
// with the hash of its identity lease.
func withIDLabel(t *testing.T, servers []*fakeapiserver.Server, label func(i int) string) {
	t.Helper()
	for i, s := range servers {
		line := `apiserver_encryption_config_controller_automatic_reloads_total{apiserver_id_hash="` + label(i) + `",status="success"} 1` + "\n"
		s.Captures = []string{fakeapiserver.EditCapture(t, golden.Fixture("t2"), func(name string, b []byte) []byte {
			if name == "metrics.txt" {
				return append(b, line...)
			}
			return b
		})}
	}
}

// leaseHashOf labels server i with the hash of lease apiserver-a, -b, ...
func leaseHashOf(i int) string { return LeaseHash("apiserver-" + string(rune('a'+i))) }

// Where each process's /metrics names its identity lease, the processes
// reached through the balancer carry it, and the one not reached is named.
func TestThroughBalancerNamesTheLeaseNotReached(t *testing.T) {
	t.Parallel()
	servers, _, cfg := behindBalancer(t, 2, func(int) int { return 0 })
	withIDLabel(t, servers, leaseHashOf)
	cfg.Balancer.Connections = 3
	s := search(t, cfg, 2)
	if len(s.results) != 1 || s.results[0].Instance.Lease != "cp-a" {
		t.Fatalf("results %+v, want the one holding cp-a's lease", s.results)
	}
	if got, want := readCoverage(s).Text(), "1 of 2 instances read (identity leases) through the load balancer after 3 connection(s); not reached: cp-b"; got != want {
		t.Errorf("coverage %q, want %q", got, want)
	}
}

// A process whose apiserver_id_hash holds ESC and U+202E (issue 35: they
// became part of its instance name, and -o jsonpath printed both raw)
// has no hash: it is named by its start time.
func TestThroughBalancerIgnoresAHostileIDHash(t *testing.T) {
	t.Parallel()
	servers, _, cfg := behindBalancer(t, 2, fakeapiserver.RoundRobin(2))
	withIDLabel(t, servers, func(int) string { return "sha256:" + strings.Repeat("ab", 16) + "\x1b]0;x\x07\u202e" })
	s := search(t, cfg, 2)
	if len(s.results) != 2 {
		t.Fatalf("%d processes, want 2", len(s.results))
	}
	for _, ir := range s.results {
		if name := ir.Instance.Name; !strings.Contains(name, "#started-") || strings.ContainsAny(name, "\x1b\x07\u202e") {
			t.Errorf("instance named %q, want its start time and nothing of the label", name)
		}
	}
}
