package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// Defect 1: a debug=2 dump of a Go program that is not kube-apiserver is
// not an all clear: exit 2, saying so, even with --fail-on info.
func TestAnalyzeDumpOfAnotherProcessIsNotAllClear(t *testing.T) {
	var dump bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&dump, 2); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "goroutine.txt")
	if err := os.WriteFile(p, dump.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, nil, "analyze", p, "--fail-on", "info")
	if code != ExitError {
		t.Errorf("exit %d, want %d", code, ExitError)
	}
	if !strings.Contains(errOut, "no watch-cache goroutines") || !strings.Contains(errOut, "another process") {
		t.Errorf("stderr %q does not say the dump may be from another process", errOut)
	}
	if !strings.Contains(out, "may be from another process") {
		t.Errorf("the report does not warn:\n%s", out)
	}
}

// Defect 4: `metrics notes.txt` refuses a file that is not exposition.
func TestMetricsRefusesAStrayNote(t *testing.T) {
	p := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(p, []byte("ticket 4711\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, nil, "metrics", p)
	if code != ExitError || out != "" || !strings.Contains(errOut, "notes.txt: unrecognized content") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// Defect 7a: a failed /metrics does not advise --force, a stop-the-world
// dump against a server that may be down.
func TestFailedMetricsDoesNotAdviseForce(t *testing.T) {
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	s.FailMetrics = true
	kc := fakeapiserver.Kubeconfig(t, s, fakeapiserver.TokenAdmin)
	code, _, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--apiserver", s.Address(), "--samples", "1")
	// The pause is estimated from the debug=1 profile, not from
	// go_goroutines, so the dump is still taken within --max-pause and the
	// stuck watch found.
	if code != ExitFindings {
		t.Errorf("exit %d, want %d", code, ExitFindings)
	}
	if strings.Contains(errOut, "--force") {
		t.Errorf("stderr advises --force after /metrics failed:\n%s", errOut)
	}
	if !strings.Contains(errOut, "GET /metrics: HTTP 500") {
		t.Errorf("stderr does not report the failed /metrics:\n%s", errOut)
	}
}

// Defect 7b: a web server that answers 404 to everything is not "an API
// server with APF disabled".
func TestEverything404IsNotAnAPIServer(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	kc := writeKubeconfig(t, map[string]string{"web": srv.URL})
	code, _, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--samples", "1", "--insecure-skip-tls-verify")
	if code != ExitError {
		t.Errorf("exit %d, want %d", code, ExitError)
	}
	for _, wrong := range []string{"API Priority and Fairness is disabled", "profiling is disabled"} {
		if strings.Contains(errOut, wrong) {
			t.Errorf("stderr claims %q of a server that 404s everything:\n%s", wrong, errOut)
		}
	}
	if !strings.Contains(errOut, "not a Kubernetes API server") {
		t.Errorf("stderr does not say it is not an API server:\n%s", errOut)
	}
}

// Defect 7c: with no kubeconfig at all, say that localhost:8080 is used, as
// kubectl does.
func TestNoKubeconfigSaysWhatItUses(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	_, _, errOut := runLive(t, "diagnose", "--samples", "1", "--request-timeout", "1s", "--apiserver", "127.0.0.1:1")
	if !strings.Contains(errOut, "no kubeconfig") || !strings.Contains(errOut, "localhost:8080") {
		t.Errorf("stderr does not say that no kubeconfig was found and localhost:8080 is used:\n%s", errOut)
	}
}

// Defect 7d: the EndpointSlices fallback note reaches stderr.
func TestFallbackNoteOnStderr(t *testing.T) {
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	kc := fakeapiserver.Kubeconfig(t, s, fakeapiserver.TokenNoDebug)
	_, _, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--samples", "1", "-o", "json")
	if !strings.Contains(errOut, "cannot list the API server instances") {
		t.Errorf("the fallback note is not on stderr:\n%s", errOut)
	}
}

// Defect 8: flag values are blamed on the flag, in words that fit.
func TestFlagMessages(t *testing.T) {
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	kc := fakeapiserver.Kubeconfig(t, s, fakeapiserver.TokenAdmin)
	tests := []struct {
		args    []string
		want    string
		notWant string
	}{
		{[]string{"diagnose", "--kubeconfig", kc, "--request-timeout", "banana"}, `invalid --request-timeout "banana"`, "kubeconfig"},
		{[]string{"metrics", "--kubeconfig", kc, "--request-timeout", "banana"}, `invalid --request-timeout "banana"`, "kubeconfig"},
		{[]string{"diagnose", "--kubeconfig", kc, "--apiserver", "10.0.0.1:99999"}, `port "99999" is out of range`, "not a number"},
	}
	for _, tc := range tests {
		code, _, errOut := runLive(t, tc.args...)
		if code != ExitError || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, tc.notWant) {
			t.Errorf("%q: exit %d, stderr %q; want %q without %q", tc.args, code, errOut, tc.want, tc.notWant)
		}
	}
}

// Defect 9: replay checks --svg before running, refuses "-" as a file
// name, and --list honours -o.
func TestReplayOutputChecks(t *testing.T) {
	code, out, errOut := run(t, nil, "replay", "issue-131721", "--svg", "/nonexistent/x.svg")
	if code != ExitError || out != "" || !strings.Contains(errOut, `--svg "/nonexistent/x.svg"`) {
		t.Errorf("--svg into a missing directory: exit %d, stdout %d bytes, stderr %q", code, len(out), errOut)
	}
	dir := t.TempDir()
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chdir(wd) })
	code, out, errOut = run(t, nil, "replay", "slow-but-progressing", "--columns", "patched", "--svg", "-")
	if _, err := os.Stat(filepath.Join(dir, "-")); err == nil {
		t.Errorf("--svg - wrote a file named \"-\"")
	}
	if code == ExitError && !strings.Contains(errOut, "--svg") {
		t.Errorf("--svg -: exit %d, stderr %q", code, errOut)
	}
	if code != ExitError && !strings.Contains(out, "<svg") {
		t.Errorf("--svg - wrote no SVG to stdout (exit %d)", code)
	}
	code, out, errOut = run(t, nil, "replay", "--list", "-o", "json")
	var list []map[string]any
	if code != ExitOK || json.Unmarshal([]byte(out), &list) != nil || len(list) == 0 || list[0]["name"] == nil {
		t.Errorf("replay --list -o json: exit %d, stderr %q, stdout:\n%s", code, errOut, out)
	}
}

// Defect 10: the help of each command agrees with its flags: it documents
// --fail-on only where the flag exists, with the flag's own default, and
// the request timeout as the code applies it.
func TestHelpAgreesWithFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	root := NewCmdRoot(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		long := c.Long
		f := c.Flags().Lookup("fail-on")
		if strings.Contains(long, "--fail-on") && f == nil {
			t.Errorf("%s: help mentions --fail-on, which it lacks", c.CommandPath())
		}
		if f != nil && !strings.Contains(long, "--fail-on (default "+f.DefValue+")") {
			t.Errorf("%s: help does not give --fail-on's default %q:\n%s", c.CommandPath(), f.DefValue, long)
		}
		if rt := c.Flags().Lookup("request-timeout"); rt != nil && (strings.Contains(rt.Usage, "don't timeout") || !strings.Contains(rt.Usage, "60s")) {
			t.Errorf("%s: --request-timeout says %q, but 0 means 60s", c.CommandPath(), rt.Usage)
		}
		if !strings.Contains(long, "Exit codes:") && c.Name() != "help" {
			t.Errorf("%s: no exit codes in help", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// Defect 11: text from dumps is stripped of control characters before it
// reaches a terminal.
func TestControlCharactersAreEscaped(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"goroutine-debug2.txt", "captured-at.txt"} {
		b, err := os.ReadFile(golden.Fixture("t2", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(golden.Fixture("t2", "apf-requests.txt"))
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.ReplaceAll(b, []byte("slow-informer, watch"), []byte("slow\x1b[2J\x1b]0;pwned\x07informer, watch"))
	if err := os.WriteFile(filepath.Join(dir, "apf-requests.txt"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"table", "wide"} {
		_, out, errOut := run(t, nil, "analyze", dir, "-o", format)
		if strings.ContainsAny(out+errOut, "\x1b\x07") {
			t.Errorf("-o %s: control characters reach the terminal:\n%q", format, out)
		}
		if !strings.Contains(out, `slow\x1b[2J`) {
			t.Errorf("-o %s: the user name is not shown escaped:\n%s", format, out)
		}
	}
}

// Defect 12: Ctrl-C stops cleanly with exit 130 and says so, without
// "context canceled".
func TestInterruptExits130(t *testing.T) {
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	s.Block = true
	kc := fakeapiserver.Kubeconfig(t, s, fakeapiserver.TokenAdmin)
	interruptAtOnce(t)
	code, _, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--apiserver", s.Address(), "--samples", "1")
	if code != ExitInterrupted {
		t.Errorf("exit %d, want %d", code, ExitInterrupted)
	}
	if strings.Contains(errOut, "context canceled") || !strings.Contains(errOut, "interrupted") {
		t.Errorf("stderr %q", errOut)
	}
}

// writeKubeconfig writes a kubeconfig with one context per name -> server
// URL (TLS verification off: the servers are the test's own).
func writeKubeconfig(t *testing.T, servers map[string]string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Config\nclusters:\n")
	names := make([]string, 0, len(servers))
	for n := range servers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "- name: %s\n  cluster: {server: %q, insecure-skip-tls-verify: true}\n", n, servers[n])
	}
	b.WriteString("users:\n- name: u\n  user: {token: " + fakeapiserver.TokenAdmin + "}\ncontexts:\n")
	for _, n := range names {
		fmt.Fprintf(&b, "- name: %s\n  context: {cluster: %s, user: u}\n", n, n)
	}
	fmt.Fprintf(&b, "current-context: %s\n", names[0])
	p := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Defect 9 (memory, progress): a scenario too large for the memory limit
// is refused before it runs, saying the estimate and the limit; printing
// it is still allowed; --from says what it is doing on stderr.
func TestReplayMemoryLimitAndProgress(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.yaml")
	sc := "name: big\nduration: 2m\nresources:\n- name: pods\n  objects:\n  - namespace: big\n    count: 1000000\n    bytes: 1Ki\nclients:\n- name: reader\n  model: paced 1000/s\n  namespace: big\n"
	if err := os.WriteFile(p, []byte(sc), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, nil, "replay", p)
	if code != ExitError || out != "" || !strings.Contains(errOut, "would need about") || !strings.Contains(errOut, "--max-memory") {
		t.Errorf("1M objects in three columns: exit %d, stderr %q", code, errOut)
	}
	if code, _, errOut := run(t, nil, "replay", p, "--print-scenario"); code != ExitOK {
		t.Errorf("--print-scenario refused: exit %d, %s", code, errOut)
	}
	_, _, errOut = run(t, nil, "replay", "--from", filepath.Dir(golden.Fixture("t1")), "--print-scenario")
	if !strings.Contains(errOut, "reading the bundle") || !strings.Contains(errOut, "derived scenario") {
		t.Errorf("--from shows no progress on stderr: %q", errOut)
	}
}

// Defect 12 (collect): Ctrl-C during collect keeps a bundle analyze reads
// and says what was written.
func TestInterruptedCollectKeepsTheBundle(t *testing.T) {
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	s.Block = true
	kc := fakeapiserver.Kubeconfig(t, s, fakeapiserver.TokenAdmin)
	interruptAtOnce(t)
	dir := filepath.Join(t.TempDir(), "bundle")
	code, _, errOut := runLive(t, "collect", "--kubeconfig", kc, "--apiserver", s.Address(), "--samples", "1", "-d", dir)
	if code != ExitInterrupted || !strings.Contains(errOut, "wrote "+dir) || !strings.Contains(errOut, "interrupted") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "manifest.json")); err != nil {
		t.Errorf("no manifest after the interrupt: %v", err)
	}
}

// interruptAtOnce makes the next command see Ctrl-C as soon as it listens.
func interruptAtOnce(t *testing.T) {
	t.Helper()
	restore := notifySignals
	notifySignals = func(c chan<- os.Signal) { c <- os.Interrupt }
	t.Cleanup(func() { notifySignals = restore })
}
