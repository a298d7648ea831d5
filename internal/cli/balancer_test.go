package cli

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// apiReport decodes a -o json report into the contract's own type.
func apiReport(t *testing.T, out string) api.Report {
	t.Helper()
	var r api.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("decoding the report: %v\n%s", err, out)
	}
	return r
}

// behindBalancer starts two fake instances, each its own process, behind
// an L4 balancer choosing with pick; their own addresses (as the
// EndpointSlices list them) do not answer, and two identity leases are
// live. It returns a kubeconfig of the balancer. Each of opts is applied
// to every instance.
func behindBalancer(t *testing.T, pick func(int) int, opts ...func(*fakeapiserver.Server)) string {
	t.Helper()
	kc, _ := balancedPair(t, pick, opts...)
	return kc
}

// balancedPair is behindBalancer, with the balancer's URL.
func balancedPair(t *testing.T, pick func(int) int, opts ...func(*fakeapiserver.Server)) (kubeconfig, url string) {
	t.Helper()
	renewed := time.Date(2026, 11, 29, 10, 23, 0, 0, time.UTC) // runLive's clock starts 9 s later
	var servers []*fakeapiserver.Server
	for i := 0; i < 2; i++ {
		s := fakeapiserver.Start(t, golden.Fixture("t2"))
		s.ProcessStart = []float64{1764410000 + float64(i)}
		s.Endpoints = []string{"127.0.0.1:1", "127.0.0.1:2"}
		s.Leases = []fakeapiserver.Lease{
			{Name: "apiserver-a", Hostname: "cp-a", Renewed: renewed, DurationSeconds: 3600},
			{Name: "apiserver-b", Hostname: "cp-b", Renewed: renewed, DurationSeconds: 3600},
		}
		for _, o := range opts {
			o(s)
		}
		servers = append(servers, s)
	}
	lb := fakeapiserver.StartBalancer(t, pick, servers...)
	return fakeapiserver.KubeconfigAt(t, servers[0], lb.URL(), fakeapiserver.TokenAdmin), lb.URL()
}

// Through a balancer that reaches both instances, the report reads 2 of
// 2, one server per instance.
func TestDiagnoseEveryInstanceThroughTheBalancer(t *testing.T) {
	t.Parallel()
	kc := behindBalancer(t, fakeapiserver.RoundRobin(2))
	code, out, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--samples", "1", "-o", "json")
	if code != ExitFindings {
		t.Fatalf("exit %d, want %d (the fixture's stuck watch)\nstderr:\n%s", code, ExitFindings, errOut)
	}
	r := apiReport(t, out)
	if c := r.Instances; c == nil || c.Read != 2 || c.Live != 2 || !c.ThroughBalancer || len(r.APIServers) != 2 {
		t.Errorf("instances %+v, %d servers; want 2 of 2 through the balancer", c, len(r.APIServers))
	}
	for _, line := range r.Incomplete {
		if strings.Contains(line, "instances read") {
			t.Errorf("incomplete %q though every instance was read", line)
		}
	}
	_, table, _ := runLive(t, "diagnose", "--kubeconfig", kc, "--samples", "1")
	if !strings.Contains(table, "\n  Instances: 2 of 2 instances read (identity leases) through the load balancer after 2 connection(s)\n") {
		t.Errorf("the table does not give the coverage:\n%s", table)
	}
}

// Through a balancer that sends every connection to one instance, the run
// reads 1 of 2: diagnose is incomplete (exit 2 when no finding reaches
// --fail-on, and said even when one does), and so are collect and the
// analyze of its bundle.
func TestDiagnoseFewerInstancesThroughTheBalancerIsIncomplete(t *testing.T) {
	t.Parallel()
	kc := behindBalancer(t, func(int) int { return 0 })
	want := "1 of 2 instances read (identity leases) through the load balancer after 14 connection(s); not reached: 1 of the 2 live (cp-a, cp-b)"
	code, _, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--samples", "1", "--fail-on", "none")
	if code != ExitError || !strings.Contains(errOut, "incomplete: ") || !strings.Contains(errOut, want) {
		t.Errorf("--fail-on none: exit %d, want %d saying %q\nstderr:\n%s", code, ExitError, want, errOut)
	}
	code, out, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--samples", "1")
	if code != ExitFindings || !strings.Contains(out, "Incomplete (not decided, not healthy):\n  - "+want) {
		t.Errorf("a critical finding: exit %d, want %d, the table saying it is incomplete:\n%s\nstderr:\n%s", code, ExitFindings, out, errOut)
	}

	dir := filepath.Join(t.TempDir(), "bundle")
	code, _, errOut = runLive(t, "collect", "--kubeconfig", kc, "--samples", "1", "-d", dir)
	if code != ExitError || !strings.Contains(errOut, "incomplete: "+want) {
		t.Errorf("collect: exit %d, want %d saying %q\nstderr:\n%s", code, ExitError, want, errOut)
	}
	code, out, errOut = runLive(t, "analyze", dir, "--fail-on", "none", "-o", "json")
	r := apiReport(t, out)
	if code != ExitError || r.Instances == nil || r.Instances.Text() != want {
		t.Errorf("analyze of the bundle: exit %d, instances %+v; want %d, %q\nstderr:\n%s", code, r.Instances, ExitError, want, errOut)
	}
}

// behindL7Balancer starts three fake instances, each its own process,
// behind an HTTP (L7) balancer that answers each request from the next
// one: every connection's requests reach all three. Their own addresses
// do not answer; three identity leases are live. It returns a kubeconfig
// of the balancer. Each of opts is applied to every instance.
func behindL7Balancer(t *testing.T, opts ...func(*fakeapiserver.Server)) string {
	t.Helper()
	return behindL7BalancerRouted(t, fakeapiserver.Spread, opts...)
}

// behindL7BalancerRouted is behindL7Balancer choosing each request's
// process by route.
func behindL7BalancerRouted(t *testing.T, route fakeapiserver.L7Route, opts ...func(*fakeapiserver.Server)) string {
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
		for _, o := range opts {
			o(s)
		}
		servers = append(servers, s)
	}
	lb := fakeapiserver.StartL7BalancerRouted(t, route, servers...)
	return fakeapiserver.KubeconfigAt(t, servers[0], lb.URL, fakeapiserver.TokenAdmin)
}

// mixedUndecided checks that no finding of r names a client, seats or a
// critical verdict, and that each in the initial phase (every one, with
// all) is UndecidedInitialEvents (MixedProcesses); it returns how many
// are UndecidedInitialEvents.
func mixedUndecided(t *testing.T, r api.Report, all bool) int {
	t.Helper()
	undecided := 0
	for _, f := range r.Findings {
		if f.Client != nil || f.Severity == api.SeverityCritical || f.SeatsKnown() {
			t.Errorf("finding %s %s on %s names client %+v: from evidence of another process", f.Severity, f.Type, f.APIServer, f.Client)
		}
		if (f.Phase == api.PhaseInitial || all) && (f.Type != api.UndecidedInitialEvents || f.UndecidedReason != api.UndecidedMixedProcesses) {
			t.Errorf("finding %s (%s, %s) on %s, want UndecidedInitialEvents (MixedProcesses)", f.Type, f.Phase, f.UndecidedReason, f.APIServer)
		}
		if f.Type == api.UndecidedInitialEvents {
			undecided++
		}
	}
	return undecided
}

// TestDiagnoseThroughAnL7BalancerIsUndecided (issue 35): through a
// balancer answering every request from another process, a sample's
// goroutine dump and APF dump come from different processes. No finding
// may take its client, seats or verdict from another process's evidence:
// they are undecided, and the run exits 2, as docs/diagnose.md promises.
// With profiling off the APF dumps and /metrics alone decide, and they
// too come from different processes: every finding is
// UndecidedInitialEvents (MixedProcesses), with no client or seats.
func TestDiagnoseThroughAnL7BalancerIsUndecided(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		profiling bool
	}{{"goroutine dumps", true}, {"profiling off", false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			kc := behindL7Balancer(t, func(s *fakeapiserver.Server) { s.NoProfiling = !tc.profiling })
			code, out, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--samples", "1", "-o", "json")
			if code != ExitError {
				t.Errorf("exit %d, want %d\nstderr:\n%s", code, ExitError, errOut)
			}
			r := apiReport(t, out)
			undecided := mixedUndecided(t, r, !tc.profiling)
			// With profiling off the APF dumps' old watches are said,
			// undecided. With goroutine dumps, every connection's sample
			// reaches a process another samples, so the ledger takes no
			// dump of it: no finding, and no instance counted read.
			if (!tc.profiling && undecided == 0) || r.Summary.StuckSeats != 0 {
				t.Errorf("%d undecided findings, %d stuck seats: want the old watches said, with no seats\n%s", undecided, r.Summary.StuckSeats, out)
			}
			if r.Instances == nil || !strings.Contains(r.Instances.Text(), "of no one instance") {
				t.Errorf("instances %+v: want none counted read, of no one instance", r.Instances)
			}
			// The sample's /metrics differs from its connection's process
			// (sampler.go's "came from"), and maybe from its own first
			// read too ("reached different"): either says it.
			if inc := strings.Join(r.Incomplete, "\n"); !strings.Contains(inc, "reached different API server processes") && !strings.Contains(inc, "the process this connection was kept for") {
				t.Errorf("incomplete %q does not say the samples reached different processes", r.Incomplete)
			}
			code, table, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--samples", "1")
			if code != ExitError || strings.Contains(table, "critical") || strings.Contains(table, "slow-informer") {
				t.Errorf("the table: exit %d, want %d, nothing critical and no client named\n%s\nstderr:\n%s", code, ExitError, table, errOut)
			}
			t.Logf("what it said:\n%s\nstderr:\n%s", table, errOut)
		})
	}
}

// ownExecutingPair returns an option giving each fake instance it is
// applied to, in turn, a capture of its own: the real t2 capture with one
// more request executing, a LIST started 12 s before the capture, in a
// priority level and flow schema of its own (the i-th of ownPairs), in
// its APF requests dump and in its /metrics'
// apiserver_flowcontrol_current_executing_requests alike. Each process is
// consistent; any two differ in what they execute.
func ownExecutingPair(t *testing.T) func(*fakeapiserver.Server) {
	t.Helper()
	ownPairs := [][2]string{{"workload-low", "service-accounts"}, {"workload-high", "kube-controller-manager"}, {"system", "system-nodes"}}
	n := 0
	return func(s *fakeapiserver.Server) {
		pair := ownPairs[n%len(ownPairs)]
		n++
		s.Captures = []string{fakeapiserver.EditCapture(t, golden.Fixture("t2"), func(name string, b []byte) []byte {
			switch name {
			case "apf-requests.txt":
				return append(b, pair[0]+", "+pair[1]+", 3, -1, system:serviceaccount:kube-system:lister, 2026-11-29T10:24:20.000000000Z, 1, 0, 0s, 2026-11-29T10:24:20.000000000Z, system:serviceaccount:kube-system:lister, list, /api/v1/pods, , , v1, pods, \n"...)
			case "metrics.txt":
				gauge := "apiserver_flowcontrol_current_executing_requests{flow_schema=\"global-default\",priority_level=\"global-default\"} 2\n"
				own := "apiserver_flowcontrol_current_executing_requests{flow_schema=\"" + pair[1] + "\",priority_level=\"" + pair[0] + "\"} 1\n"
				if !strings.Contains(string(b), gauge) {
					t.Fatalf("the t2 capture's /metrics lacks %q", gauge)
				}
				return []byte(strings.Replace(string(b), gauge, gauge+own, 1))
			}
			return b
		})}
	}
}

// TestDiagnoseThroughABalancerSaysWhatTiesEvidence (issue 35): what ties
// a dump without identity to a process read through the kubeconfig host
// is the identity probes of its connection (live/pin.go) and, for the APF
// requests dump, its executing requests against the gauge of the
// sample's /metrics (live/tie.go). Through an L4 balancer, which keeps a
// connection on one process, they all agree: the findings are decided and
// name their client and seats, whether the processes execute the same
// requests or not. Through a balancer that routes by path (every
// /metrics to the connection's process, the APF dumps and goroutine
// profiles to another), the probes all agree too; when the two processes
// execute the same APF requests (the same capture), so does the dump, and
// the findings are decided alike, naming the clients both processes hold:
// what the report claims is no more than that, each server's notes saying
// how many reads named its process, what the dump was checked against,
// and that such a balancer would pass them (docs/diagnose.md, the
// residual risk).
func TestDiagnoseThroughABalancerSaysWhatTiesEvidence(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		kc   func(t *testing.T) string
	}{
		{"L4, connection-pinned", func(t *testing.T) string { return behindBalancer(t, fakeapiserver.RoundRobin(2)) }},
		{"L4, processes executing different requests", func(t *testing.T) string {
			return behindBalancer(t, fakeapiserver.RoundRobin(2), ownExecutingPair(t))
		}},
		{"L7, routed by path, processes executing the same requests", func(t *testing.T) string { return behindL7BalancerRouted(t, fakeapiserver.ByPath) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runLive(t, "diagnose", "--kubeconfig", tc.kc(t), "--samples", "1", "-o", "json")
			if code != ExitFindings {
				t.Fatalf("exit %d, want %d (the fixture's stuck watch, decided)\nstderr:\n%s", code, ExitFindings, errOut)
			}
			r := apiReport(t, out)
			named := 0
			for _, f := range r.Findings {
				if f.Type == api.StuckInitialEvents && f.Client != nil && f.SeatsKnown() {
					named++
				}
			}
			if named == 0 || len(r.APIServers) < 2 {
				t.Errorf("%d stuck watches with client and seats on %d servers, want the fixture's on each\n%s", named, len(r.APIServers), out)
			}
			for _, s := range r.APIServers {
				notes := strings.Join(s.Notes, "\n")
				for _, want := range []string{
					"sample 1: 7 reads of the process over this connection, one right after each of its 5 fetches that carry no process identity, all named process_start_time_seconds ",
					"; its APF requests dump lists no more requests executing per priority level and flow schema since 5s before its /metrics than that read's apiserver_flowcontrol_current_executing_requests counted (",
					"tied to this process only by identity probes of /metrics over the same connection and, for the APF requests dump, by its executing requests agreeing with that /metrics' apiserver_flowcontrol_current_executing_requests",
					"which a load balancer routing /debug paths to another process than /metrics would pass whenever the two processes' executing APF requests agree",
				} {
					if !strings.Contains(notes, want) {
						t.Errorf("%s: notes %q\nlack %q", s.Name, s.Notes, want)
					}
				}
			}
		})
	}
}

// TestDiagnoseThroughAPathRoutingBalancerIsCaughtByContent (issue 35):
// through a balancer that routes by path, every identity probe agrees,
// but each connection's APF requests dump comes from another process,
// which executes a request (in a priority level and flow schema of its
// own) that the connection's process does not: the dump lists more
// requests executing since before the sample's /metrics than that
// /metrics' gauge counts. The sample is mixed, its findings
// UndecidedInitialEvents (MixedProcesses) with no client and no seats,
// and the run exits 2.
func TestDiagnoseThroughAPathRoutingBalancerIsCaughtByContent(t *testing.T) {
	t.Parallel()
	kc := behindL7BalancerRouted(t, fakeapiserver.ByPath, ownExecutingPair(t))
	code, out, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--samples", "1", "-o", "json")
	if code != ExitError {
		t.Errorf("exit %d, want %d\nstderr:\n%s", code, ExitError, errOut)
	}
	r := apiReport(t, out)
	undecided := mixedUndecided(t, r, false)
	if undecided == 0 || r.Summary.StuckSeats != 0 {
		t.Errorf("%d undecided findings, %d stuck seats: want the stuck watches undecided, with no seats\n%s", undecided, r.Summary.StuckSeats, out)
	}
	// Connection 0's /metrics is process 0's (workload-low,
	// service-accounts), its dump process 1's (workload-high,
	// kube-controller-manager).
	const want = `sample 1: its APF requests dump (GET /debug/api_priority_and_fairness/dump_requests?includeRequestDetails=1, at 2026-11-29T10:24:32Z) lists 1 request(s) of priority level "workload-high", flow schema "kube-controller-manager" executing since more than 5s before its /metrics (read at 2026-11-29T10:24:32Z, process_start_time_seconds 1764410000.00), whose apiserver_flowcontrol_current_executing_requests counted 0 there: the dump is of another API server process than that /metrics, so the load balancer sends this connection's /debug paths elsewhere`
	if inc := strings.Join(r.Incomplete, "\n"); !strings.Contains(inc, want) {
		t.Errorf("incomplete %q\ndoes not say %q", r.Incomplete, want)
	}
	t.Logf("incomplete:\n%s", strings.Join(r.Incomplete, "\n"))
}
