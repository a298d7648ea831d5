package cli

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// behindL7Balancer starts three fake instances, each its own process,
// behind an HTTP (L7) balancer that answers each request from the next
// one: every connection's requests reach all three. Their own addresses
// do not answer; three identity leases are live. It returns a kubeconfig
// of the balancer.
func behindL7Balancer(t *testing.T) string {
	t.Helper()
	renewed := time.Date(2026, 11, 29, 10, 23, 0, 0, time.UTC)
	var servers []*fakeapiserver.Server
	for i := range 3 {
		s := fakeapiserver.Start(t, golden.Fixture("t2"))
		s.ProcessStart = []float64{1764410000 + float64(i)}
		s.Endpoints = []string{"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"}
		for j := range 3 {
			s.Leases = append(s.Leases, fakeapiserver.Lease{Name: "apiserver-" + strconv.Itoa(j), Hostname: "cp-" + strconv.Itoa(j), Renewed: renewed, DurationSeconds: 3600})
		}
		servers = append(servers, s)
	}
	lb := fakeapiserver.StartL7Balancer(t, servers...)
	return fakeapiserver.KubeconfigAt(t, servers[0], lb.URL, fakeapiserver.TokenAdmin)
}

// TestDiagnoseThroughAnL7BalancerIsUndecided (issue 35): through a
// balancer answering every request from another process, a sample's
// goroutine dump and APF dump come from different processes. No finding
// may take its client, seats or verdict from another process's evidence:
// they are undecided, and the run exits 2, as docs/diagnose.md promises.
func TestDiagnoseThroughAnL7BalancerIsUndecided(t *testing.T) {
	t.Parallel()
	kc := behindL7Balancer(t)
	code, out, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--samples", "1", "-o", "json")
	if code != ExitError {
		t.Errorf("exit %d, want %d\nstderr:\n%s", code, ExitError, errOut)
	}
	r := apiReport(t, out)
	undecided := 0
	for _, f := range r.Findings {
		if f.Client != nil || f.Severity == api.SeverityCritical {
			t.Errorf("finding %s %s on %s names client %+v: from evidence of another process", f.Severity, f.Type, f.APIServer, f.Client)
		}
		if f.Phase == api.PhaseInitial && (f.Type != api.UndecidedInitialEvents || f.UndecidedReason != api.UndecidedMixedProcesses) {
			t.Errorf("initial-phase finding %s (%s) on %s, want UndecidedInitialEvents (MixedProcesses)", f.Type, f.UndecidedReason, f.APIServer)
		}
		if f.Type == api.UndecidedInitialEvents {
			undecided++
		}
	}
	if undecided == 0 {
		t.Errorf("no undecided finding: the blocked watchers of the dumps are said nowhere\n%s", out)
	}
	if !strings.Contains(strings.Join(r.Incomplete, "\n"), "reached different API server processes") {
		t.Errorf("incomplete %q does not say the samples reached different processes", r.Incomplete)
	}
	code, table, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--samples", "1")
	if code != ExitError || strings.Contains(table, "critical") {
		t.Errorf("the table: exit %d, want %d and nothing critical\n%s\nstderr:\n%s", code, ExitError, table, errOut)
	}
	t.Logf("what it said:\n%s\nstderr:\n%s", table, errOut)
}
