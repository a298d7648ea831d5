package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/bundle"
	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// autoStepClock is a fake clock on which waiting for d moves virtual time
// by d at once: two samples 70 s apart take no real time, deterministically.
type autoStepClock struct{ *testingclock.FakeClock }

func (c autoStepClock) After(d time.Duration) <-chan time.Time {
	ch := c.FakeClock.After(d)
	c.FakeClock.Step(d)
	return ch
}

// runLive runs the command tree on the auto-stepping clock.
func runLive(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runLiveOn(t, testingclock.NewFakeClock(time.Date(2026, 11, 29, 10, 23, 9, 0, time.UTC)), args...)
}

// runLiveOn is runLive on clk, auto-stepped.
func runLiveOn(t *testing.T, fc *testingclock.FakeClock, args ...string) (int, string, string) {
	t.Helper()
	clk := autoStepClock{fc}
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	code := execute(newCmdRoot(streams, clk), streams, args)
	return code, out.String(), errOut.String()
}

func TestDiagnoseTwoSamplesPinned(t *testing.T) {
	t.Parallel()
	// Two instances behind a "load balancer" that only serves discovery.
	a := fakeapiserver.Start(t, golden.Fixture("t1"), golden.Fixture("t2"))
	b := fakeapiserver.Start(t, golden.Fixture("t2"))
	lb := fakeapiserver.Start(t, golden.Fixture("t2"))
	lb.Endpoints = []string{a.Address(), b.Address()}
	kc := fakeapiserver.Kubeconfig(t, lb, fakeapiserver.TokenAdmin)

	code, out, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "-o", "json")
	if code != ExitFindings {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	if errOut != "" {
		t.Errorf("-o json must keep stderr quiet without -v, got:\n%s", errOut)
	}
	r := decodeReport(t, out)
	// Each instance is read on its own address; the balancer never serves
	// a goroutine dump.
	for _, p := range lb.Requests() {
		if strings.HasPrefix(p, "/debug/") {
			t.Errorf("the kubeconfig host served %s: fetches are not pinned", p)
		}
	}
	for name, s := range map[string]*fakeapiserver.Server{"a": a, "b": b} {
		n := 0
		for _, p := range s.Requests() {
			if p == "/debug/pprof/goroutine?debug=2" {
				n++
			}
		}
		if n != 2 {
			t.Errorf("instance %s served %d goroutine dumps, want 2 (one per sample)", name, n)
		}
	}
	// Instance a: t1 then t2. The stuck watcher showed no minutes in t1 and
	// 2 in t2: stuck. Instance b served t2 twice, with t2's own Date header,
	// so the interval reads as 0: with no interval known only a wait that
	// went down proves progress, and the 2-minute wait alone makes it stuck.
	stuck := map[string]int{}
	for _, f := range r.Findings {
		if f.Type == "StuckInitialEvents" {
			stuck[strings.Join(f.names(), "|")]++
		}
		if f.Type == "StuckInitialEvents" && f.GoroutineIDs[0] != 33988 {
			t.Errorf("stuck finding on goroutine %d, want 33988", f.GoroutineIDs[0])
		}
	}
	if stuck["paced-reader|slow-informer"] != 2 || len(stuck) != 1 {
		t.Errorf("stuck findings by user = %v, want slow-informer among the candidates on both instances", stuck)
	}
}

func TestVerboseTakesALevelAsKubectlUsersTypeIt(t *testing.T) {
	t.Parallel()
	a := fakeapiserver.Start(t, golden.Fixture("t2"))
	kc := fakeapiserver.Kubeconfig(t, a, fakeapiserver.TokenAdmin)
	for _, v := range []string{"-v", "-v=6", "--verbose"} {
		_, _, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--apiserver", a.Address(), "--samples", "1", "-o", "json", v)
		if !strings.Contains(errOut, "sample 1/1: "+a.Address()) {
			t.Errorf("%s: no progress on stderr: %q", v, errOut)
		}
	}
}

func TestDiagnoseProgressOnStderr(t *testing.T) {
	t.Parallel()
	a := fakeapiserver.Start(t, golden.Fixture("t1"), golden.Fixture("t2"))
	kc := fakeapiserver.Kubeconfig(t, a, fakeapiserver.TokenAdmin)
	code, out, errOut := runLive(t, "--kubeconfig", kc, "--apiserver", a.Address())
	if code != ExitFindings {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	for _, want := range []string{"sample 1/2: " + a.Address() + ": goroutine dump (go_goroutines 2231; estimated pause 90ms from the debug=1 profile: 2227 goroutines, 10814 frames)", "waiting 1m10s for sample 2/2", "sample 2/2: " + a.Address()} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if !strings.Contains(out, "StuckInitialEvents   critical   paced-reader | slow-informer") {
		t.Errorf("table lacks the stuck client:\n%s", out)
	}
}

func TestDiagnoseFallbackWhenInstancesUnreachable(t *testing.T) {
	t.Parallel()
	lb := fakeapiserver.Start(t, golden.Fixture("t2"))
	// The advertised addresses are not reachable from here (closed port).
	lb.Endpoints = []string{"127.0.0.1:1"}
	kc := fakeapiserver.Kubeconfig(t, lb, fakeapiserver.TokenAdmin)
	code, out, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--samples", "1", "-o", "json")
	if code != ExitFindings {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	var r struct {
		Warnings   []string `json:"warnings"`
		APIServers []struct {
			Name  string   `json:"name"`
			Notes []string `json:"notes"`
		} `json:"apiservers"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if !containsAll(strings.Join(r.Warnings, "\n"), "none of the 1 API server instances is reachable directly", "reading through the kubeconfig host "+lb.Address()) {
		t.Errorf("warnings do not say the read fell back to the kubeconfig host: %q", r.Warnings)
	}
	if len(r.APIServers) != 1 || r.APIServers[0].Name != lb.Address() || !containsAll(strings.Join(r.APIServers[0].Notes, "\n"), "not pinned") {
		t.Errorf("apiservers = %+v, want the kubeconfig host, marked not pinned", r.APIServers)
	}
}

func TestDiagnoseDetectsMixedProcessesThroughLoadBalancer(t *testing.T) {
	t.Parallel()
	lb := fakeapiserver.Start(t, golden.Fixture("t2"))
	lb.Endpoints = []string{"127.0.0.1:1"}
	// Each /metrics answer comes from another process.
	lb.ProcessStart = []float64{1.7e9, 1.8e9, 1.9e9}
	kc := fakeapiserver.Kubeconfig(t, lb, fakeapiserver.TokenAdmin)
	code, out, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--samples", "1", "-o", "json")
	if !strings.Contains(out, "reached different API server processes (process_start_time_seconds 1700000000.00, then 1800000000.00 after GET /debug/api_priority_and_fairness/dump_requests?includeRequestDetails=1)") {
		t.Errorf("report does not flag the mixed sample:\n%s\nstderr:\n%s", out, errOut)
	}
	if code != ExitError {
		t.Errorf("exit %d, want %d: nothing is decided from a mixed sample", code, ExitError)
	}
	// The dumps may come from different processes: no client, no seats,
	// no verdict (issue 35).
	for _, f := range decodeReport(t, out).Findings {
		if f.Client != nil || f.Type != "UndecidedInitialEvents" {
			t.Errorf("finding %s on %v: client %+v, want undecided with no client", f.Type, f.GoroutineIDs, f.Client)
		}
	}
}

func TestDiagnoseErrors(t *testing.T) {
	// Not parallel: it waits for a request timeout of a fraction of a
	// second, which the other reads must not reach on a loaded machine.
	t.Run("forbidden names the rule and prints the ClusterRole", func(t *testing.T) {
		a := fakeapiserver.Start(t, golden.Fixture("t2"))
		kc := fakeapiserver.Kubeconfig(t, a, fakeapiserver.TokenNoDebug)
		code, _, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--samples", "1")
		if code != ExitError {
			t.Fatalf("exit %d, want %d", code, ExitError)
		}
		rbac, err := os.ReadFile(filepath.Join("..", "..", "deploy", "rbac.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		want := []string{
			`GET /metrics forbidden: missing RBAC rule nonResourceURLs: ["/metrics"], verbs: ["get"]`,
			// The debug=1 profile refused, the debug=2 dump is not asked
			// for: it would be refused too.
			`GET /debug/pprof/goroutine forbidden: missing RBAC rule nonResourceURLs: ["/debug/pprof/*"], verbs: ["get"]`,
			`GET /debug/api_priority_and_fairness/dump_requests forbidden: missing RBAC rule nonResourceURLs: ["/debug/api_priority_and_fairness/*"], verbs: ["get"]`,
			`nonResourceURLs: ["/debug/pprof/*"], verbs: ["get"]`,
			`apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["list"]`,
			"kind: ClusterRole",
		}
		if !containsAll(errOut, want...) {
			t.Errorf("stderr lacks the RBAC advice:\n%s", errOut)
		}
		// Refused fetches are no reason for a stop-the-world dump.
		if strings.Contains(errOut, "--force") {
			t.Errorf("stderr advises --force though the pause could not be estimated:\n%s", errOut)
		}
		// The ClusterRole printed is deploy/rbac.yaml's.
		role := string(rbac[strings.Index(string(rbac), "apiVersion:"):])
		if !strings.Contains(errOut, indent(role, "  ")) {
			t.Errorf("printed ClusterRole differs from deploy/rbac.yaml:\n%s", errOut)
		}
	})
	t.Run("profiling disabled", func(t *testing.T) {
		a := fakeapiserver.Start(t, golden.Fixture("t2"))
		a.NoProfiling = true
		kc := fakeapiserver.Kubeconfig(t, a, fakeapiserver.TokenAdmin)
		code, out, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--apiserver", a.Address(), "--samples", "1")
		if code != ExitError {
			t.Fatalf("exit %d, want %d", code, ExitError)
		}
		if !strings.Contains(errOut, "profiling is disabled on this API server (--profiling=false)") {
			t.Errorf("stderr:\n%s", errOut)
		}
		if !strings.Contains(out, "no goroutine dump") {
			t.Errorf("the report must say no dump could be read:\n%s", out)
		}
	})
	t.Run("max goroutines refuses the dump", func(t *testing.T) {
		a := fakeapiserver.Start(t, golden.Fixture("t2"))
		kc := fakeapiserver.Kubeconfig(t, a, fakeapiserver.TokenAdmin)
		code, _, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--apiserver", a.Address(), "--samples", "1", "--max-goroutines", "1000")
		if code != ExitError {
			t.Fatalf("exit %d, want %d", code, ExitError)
		}
		if !strings.Contains(errOut, "go_goroutines is 2230, above --max-goroutines 1000") {
			t.Errorf("stderr:\n%s", errOut)
		}
		if !strings.Contains(errOut, "Flag --max-goroutines has been deprecated, it still works, but --max-pause bounds what a goroutine dump costs the server") {
			t.Errorf("no deprecation notice:\n%s", errOut)
		}
		for _, p := range a.Requests() {
			if strings.HasPrefix(p, "/debug/pprof/goroutine?debug=2") {
				t.Errorf("the dump was requested despite --max-goroutines: %s", p)
			}
		}
	})
	t.Run("one failing instance does not hide the other", func(t *testing.T) {
		good := fakeapiserver.Start(t, golden.Fixture("t2"))
		bad := fakeapiserver.Start(t, golden.Fixture("t2"))
		bad.Fail = true
		kc := fakeapiserver.Kubeconfig(t, good, fakeapiserver.TokenAdmin)
		code, out, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--apiserver", good.Address(), "--apiserver", bad.Address(), "--samples", "1", "-o", "json")
		if code != ExitFindings {
			t.Fatalf("exit %d (stuck findings on the good instance win), stderr:\n%s", code, errOut)
		}
		var r struct {
			Findings []struct {
				APIServer string `json:"apiserver"`
				Type      string `json:"type"`
			} `json:"findings"`
			Errors []string `json:"errors"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		if len(r.Findings) == 0 || r.Findings[0].APIServer != good.Address() || r.Findings[0].Type != "StuckInitialEvents" {
			t.Errorf("findings = %+v, want the good instance's stuck watch", r.Findings)
		}
		if !containsAll(strings.Join(r.Errors, "\n"), bad.Address()+": GET /metrics: HTTP 500") {
			t.Errorf("errors = %q, want the failing instance's", r.Errors)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		a := fakeapiserver.Start(t, golden.Fixture("t2"))
		a.Block = true
		kc := fakeapiserver.Kubeconfig(t, a, fakeapiserver.TokenAdmin)
		// 2 s, not less: /metrics (t2's, parsed as it is read) must be read
		// within it under -race on a loaded machine; only the blocked
		// goroutine dump may time out.
		code, _, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--apiserver", a.Address(), "--samples", "1", "--request-timeout", "2s")
		if code != ExitError {
			t.Fatalf("exit %d, want %d", code, ExitError)
		}
		if !strings.Contains(errOut, "GET /debug/pprof/goroutine: timed out after 2s (--request-timeout)") {
			t.Errorf("stderr:\n%s", errOut)
		}
	})
	t.Run("bad flags", func(t *testing.T) {
		for args, want := range map[string]string{
			"--samples 0":          "invalid --samples 0: at least 1",
			"--interval 0s":        "invalid --interval 0s",
			"--max-goroutines -1":  "invalid --max-goroutines -1",
			"-o xml":               `unsupported --output "xml"`,
			"--apiserver host:x":   `invalid --apiserver "host:x"`,
			"--kubeconfig /nope/x": "no cluster to read",
		} {
			a := fakeapiserver.Start(t, golden.Fixture("t2"))
			kc := fakeapiserver.Kubeconfig(t, a, fakeapiserver.TokenAdmin)
			code, _, errOut := runLive(t, append([]string{"diagnose", "--kubeconfig", kc}, strings.Fields(args)...)...)
			if code != ExitError || !strings.Contains(errOut, want) {
				t.Errorf("%s: exit %d, stderr %q, want 2 and %q", args, code, errOut, want)
			}
		}
	})
}

func TestCollectThenAnalyzeAgreesWithDiagnose(t *testing.T) {
	t.Parallel()
	a := fakeapiserver.Start(t, golden.Fixture("t1"), golden.Fixture("t2"))
	kc := fakeapiserver.Kubeconfig(t, a, fakeapiserver.TokenAdmin)
	_, liveOut, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--apiserver", a.Address(), "-o", "json")
	a2 := fakeapiserver.Start(t, golden.Fixture("t1"), golden.Fixture("t2"))
	kc2 := fakeapiserver.Kubeconfig(t, a2, fakeapiserver.TokenAdmin)
	dir := filepath.Join(t.TempDir(), "bundle")
	code, _, errOut2 := runLive(t, "collect", "--kubeconfig", kc2, "--apiserver", a2.Address(), "-d", dir)
	if code != ExitOK {
		t.Fatalf("collect exit %d:\n%s\n%s", code, errOut, errOut2)
	}
	// The bundle holds the layout analyze reads, and nothing else.
	var files []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, filepath.ToSlash(strings.ReplaceAll(rel, bundle.SafeName(a2.Address()), "INSTANCE")))
		}
		return nil
	})
	golden.Assert(t, "collect-files.txt", []byte(strings.Join(files, "\n")+"\n"))

	code, offline, errOut3 := run(t, nil, "analyze", dir, "-o", "json")
	if code != ExitFindings {
		t.Fatalf("analyze exit %d: %s", code, errOut3)
	}
	lr, or := decodeReport(t, strings.ReplaceAll(liveOut, a.Address(), "X")), decodeReport(t, strings.ReplaceAll(offline, a2.Address(), "X"))
	if lr.Summary != or.Summary || len(lr.Findings) != len(or.Findings) {
		t.Fatalf("analyze of the bundle differs from diagnose:\nlive    %+v\noffline %+v", lr, or)
	}
	for i := range lr.Findings {
		l, o := lr.Findings[i], or.Findings[i]
		if l.Type != o.Type || l.Severity != o.Severity || *l.Client != *o.Client {
			t.Errorf("finding %d: live %+v %+v, offline %+v %+v", i, l, l.Client, o, o.Client)
		}
	}
}

func TestCollectRefusesNonEmptyDir(t *testing.T) {
	t.Parallel()
	a := fakeapiserver.Start(t, golden.Fixture("t2"))
	kc := fakeapiserver.Kubeconfig(t, a, fakeapiserver.TokenAdmin)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "x"), nil, 0o644)
	code, _, errOut := runLive(t, "collect", "--kubeconfig", kc, "-d", dir)
	if code != ExitError || !strings.Contains(errOut, "the directory is not empty") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	if len(a.Requests()) != 0 {
		t.Errorf("collect contacted the server before validating --dir: %v", a.Requests())
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// TestDiagnoseRestartBetweenSamplesIsTwoProcesses: when an instance
// restarts between samples, its two dumps are not compared as one process.
func TestDiagnoseRestartBetweenSamplesIsTwoProcesses(t *testing.T) {
	t.Parallel()
	a := fakeapiserver.Start(t, golden.Fixture("t1"), golden.Fixture("t2"))
	a.ProcessStart = []float64{1.7e9, 1.8e9}
	kc := fakeapiserver.Kubeconfig(t, a, fakeapiserver.TokenAdmin)
	_, out, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--apiserver", a.Address(), "-o", "json")
	var r struct {
		APIServers []struct {
			Name    string `json:"name"`
			Samples int    `json:"samples"`
		} `json:"apiservers"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	want := []string{a.Address() + " (process started 2023-11-14T22:13:20Z)", a.Address() + " (process started 2027-01-15T08:00:00Z)"}
	if len(r.APIServers) != 2 || r.APIServers[0].Name != want[0] || r.APIServers[1].Name != want[1] || r.APIServers[0].Samples != 1 {
		t.Errorf("apiservers = %+v, want two single-sample processes %q", r.APIServers, want)
	}
}
