package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// hostile is a fake API server serving t2 whose answer to key is h.
func hostile(t *testing.T, key string, h *fakeapiserver.Hostility) *fakeapiserver.Server {
	t.Helper()
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	s.Hostile = map[string]*fakeapiserver.Hostility{key: h}
	return s
}

// TestOneHostileClusterFailsAlone: in fleet mode a gzip bomb answering
// one context's EndpointSlices list is that cluster's error alone; the
// healthy cluster's findings are still printed.
func TestOneHostileClusterFailsAlone(t *testing.T) {
	good := fakeapiserver.Start(t, golden.Fixture("t2"))
	bomb := hostile(t, fakeapiserver.DiscoveryPath, &fakeapiserver.Hostility{Kind: fakeapiserver.GzipBomb})
	kc := writeKubeconfig(t, map[string]string{"good": good.URL, "bomb": bomb.URL})
	code, out, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--all-contexts", "--samples", "1", "-o", "json")
	if code != ExitError {
		t.Errorf("exit %d, want %d", code, ExitError)
	}
	var d fleetDoc
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, errOut)
	}
	if len(d.Clusters) != 2 || d.Clusters[0].Context != "bomb" || d.Clusters[1].Context != "good" {
		t.Fatalf("clusters %+v", d.Clusters)
	}
	if e := d.Clusters[0].Error; !strings.Contains(e, "larger than 4 MiB after decompression") {
		t.Errorf("bomb: error %q, want the bound named", e)
	}
	if r := d.Clusters[1].Report; d.Clusters[1].Error != "" || r == nil || r.Summary.StuckWatches != 1 {
		t.Errorf("good: error %q, report %+v", d.Clusters[1].Error, r)
	}
}

// TestEndlessDumpKeepsTheReportBounded: an endless debug=2 stream of
// stuck watchers with --force is refused at 64 MiB, said on stderr, and
// the JSON report stays small.
func TestEndlessDumpKeepsTheReportBounded(t *testing.T) {
	s := hostile(t, "/debug/pprof/goroutine?debug=2", &fakeapiserver.Hostility{Kind: fakeapiserver.Endless})
	kc := fakeapiserver.Kubeconfig(t, s, fakeapiserver.TokenAdmin)
	code, out, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--apiserver", s.Address(), "--samples", "1", "--force", "-o", "json")
	if code != ExitError || !strings.Contains(errOut, s.Address()+": GET /debug/pprof/goroutine: the answer is larger than 64 MiB") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	if len(out) > 1<<20 {
		t.Errorf("the report is %d bytes, want it under 1 MiB", len(out))
	}
}

// TestNoClientGoLogLineReachesStderr: a body client-go fails to read
// gives our error, not client-go's raw klog line on the process's stderr.
func TestNoClientGoLogLineReachesStderr(t *testing.T) {
	s := hostile(t, fakeapiserver.DiscoveryPath, &fakeapiserver.Hostility{Kind: fakeapiserver.Endless})
	kc := fakeapiserver.Kubeconfig(t, s, fakeapiserver.TokenAdmin)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = w
	_, _, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--samples", "1")
	os.Stderr = saved
	w.Close()
	raw, _ := io.ReadAll(r)
	if len(raw) != 0 {
		t.Errorf("the process's stderr got %q", raw)
	}
	if !strings.Contains(errOut, "larger than 4 MiB") {
		t.Errorf("stderr %q, want our error", errOut)
	}
}

// TestServerUserinfoIsRedactedEverywhere: a kubeconfig server
// https://user:PASS@host leaves the password out of collect's manifest and
// out of every output.
func TestServerUserinfoIsRedactedEverywhere(t *testing.T) {
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	withUser := strings.Replace(s.URL, "https://", "https://user:S3CRET@", 1)
	kc := writeKubeconfig(t, map[string]string{"c": withUser})
	dir := filepath.Join(t.TempDir(), "bundle")
	_, out, errOut := runLive(t, "collect", "--kubeconfig", kc, "--apiserver", s.Address(), "--samples", "1", "-d", dir)
	manifest, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	_, fleet, fleetErr := runLive(t, "diagnose", "--kubeconfig", kc, "--all-contexts", "--samples", "1", "-o", "json")
	for name, text := range map[string]string{"manifest.json": string(manifest), "collect stdout": out, "collect stderr": errOut, "fleet report": fleet, "fleet stderr": fleetErr} {
		if strings.Contains(text, "S3CRET") {
			t.Errorf("%s holds the password:\n%s", name, text)
		}
	}
	if want := `"server": "` + s.URL + `"`; !strings.Contains(string(manifest), want) {
		t.Errorf("manifest.json has no %s", want)
	}
}

// TestInterruptedCollectSaysSoInEveryLine: SIGTERM during a slow fetch
// makes the sample's line and collect's summary both say interrupted, with
// the same counts.
func TestInterruptedCollectSaysSoInEveryLine(t *testing.T) {
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	s.Block = true
	s.Started = make(chan string)
	replaceSignalRelay(t)
	restore := notifySignals
	notifySignals = func(c chan<- os.Signal) {
		go func() {
			for p := range s.Started {
				if p == "/debug/pprof/goroutine?debug=2" {
					c <- syscall.SIGTERM
				}
			}
		}()
	}
	t.Cleanup(func() { notifySignals = restore; close(s.Started) })
	kc := fakeapiserver.Kubeconfig(t, s, fakeapiserver.TokenAdmin)
	dir := filepath.Join(t.TempDir(), "bundle")
	code, _, errOut := runLive(t, "collect", "--kubeconfig", kc, "--apiserver", s.Address(), "--samples", "1", "--force", "-d", dir)
	for _, want := range []string{
		"sample 1/1: " + s.Address() + ": interrupted (1 request(s) cut short, 0 failed)",
		"wrote " + dir + ", interrupted (terminated): 1 instance(s), 1 sample(s), 1 request(s) cut short, 0 failed",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr has no %q:\n%s", want, errOut)
		}
	}
	if code != ExitInterrupted || strings.Contains(errOut, "done (") {
		t.Errorf("exit %d, stderr:\n%s", code, errOut)
	}
}

// TestWarningsAreSummarisedAfterAFewOfAKind: 500 refused instances give
// three lines of the kind and "and 497 more like it", not 500.
func TestWarningsAreSummarisedAfterAFewOfAKind(t *testing.T) {
	// Hold a port on 127.0.0.1 so that nothing else takes it; on the other
	// loopback addresses nothing listens there: each connection is refused.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	port := l.Addr().(*net.TCPAddr).Port
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	args := []string{"diagnose", "--kubeconfig", fakeapiserver.Kubeconfig(t, s, fakeapiserver.TokenAdmin), "--samples", "1"}
	for i := 0; i < 500; i++ {
		args = append(args, "--apiserver", fmt.Sprintf("127.0.%d.%d:%d", 1+i/250, 1+i%250, port))
	}
	code, _, errOut := runLive(t, args...)
	if code != ExitError {
		t.Errorf("exit %d", code)
	}
	if n := strings.Count(errOut, "\n"); n > 10 || !strings.Contains(errOut, "500 request(s) failed:") || !strings.Contains(errOut, "  - and 497 more like it\n") {
		t.Errorf("%d lines on stderr:\n%s", n, errOut)
	}
}

// TestErrorBodiesAreEscapedWherePrinted: an error body holding ESC, BEL,
// CR, a C1 CSI, a right-to-left override (U+202E) and a tab keeps its
// value in the report (-o json decodes to the server's very bytes) and
// reaches the terminal escaped in every text form: stdout of the table
// and of wide, and the errors on stderr. It is escaped where it is
// printed, never where it is read.
func TestErrorBodiesAreEscapedWherePrinted(t *testing.T) {
	const body = "x\x1b]0;owned\x07\r\u009b2J \u202eexe.txt\tcol"
	s := hostile(t, "/debug/pprof/goroutine?debug=1", &fakeapiserver.Hostility{Kind: fakeapiserver.ErrorBody, Body: body})
	kc := fakeapiserver.Kubeconfig(t, s, fakeapiserver.TokenAdmin)
	const raw = "\x1b\x07\r\u009b\u202e\t"
	for _, output := range []string{"table", "wide", "json"} {
		t.Run(output, func(t *testing.T) {
			_, out, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--apiserver", s.Address(), "--samples", "1", "-o", output)
			if strings.ContainsAny(errOut, raw) {
				t.Errorf("stderr holds raw control characters: %q", errOut)
			}
			if strings.ContainsAny(out, raw) {
				t.Errorf("stdout holds raw control characters: %q", out)
			}
			if want := `HTTP 500: x\x1b]0;owned\x07\x0d\u009b2J \u202eexe.txt\tcol`; !strings.Contains(errOut, want) {
				t.Errorf("stderr does not show the body escaped (%s):\n%s", want, errOut)
			}
			if output != "json" {
				return
			}
			var r api.Report
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if !slices.ContainsFunc(r.Errors, func(e string) bool { return strings.Contains(e, "HTTP 500: "+body) }) {
				t.Errorf("the report's errors do not keep the body's value %q: %q", body, r.Errors)
			}
		})
	}
}

// TestAnErrorNamesWhatHappenedADumpOverItsBoundInCollect: in collect, a
// debug=2 dump over its 64 MiB bound is reported as the bound it hit,
// not as an interruption or a failed write, and the sample's other
// fetches are still made and written.
func TestAnErrorNamesWhatHappenedADumpOverItsBoundInCollect(t *testing.T) {
	s := hostile(t, "/debug/pprof/goroutine?debug=2", &fakeapiserver.Hostility{Kind: fakeapiserver.Endless})
	kc := fakeapiserver.Kubeconfig(t, s, fakeapiserver.TokenAdmin)
	dir := filepath.Join(t.TempDir(), "b")
	code, _, errOut := runLive(t, "collect", "--kubeconfig", kc, "--apiserver", s.Address(), "--samples", "1", "--force", "-d", dir)
	if code != ExitError {
		t.Errorf("exit %d, want %d", code, ExitError)
	}
	if !strings.Contains(errOut, "GET /debug/pprof/goroutine: the answer is larger than 64 MiB") {
		t.Errorf("stderr does not name the bound:\n%s", errOut)
	}
	for _, wrong := range []string{"interrupted", "writing the bundle", "first failed write"} {
		if strings.Contains(errOut, wrong) {
			t.Errorf("stderr says %q, which did not happen:\n%s", wrong, errOut)
		}
	}
	sample := filepath.Join(dir, strings.ReplaceAll(s.Address(), ":", "_"), "sample-1")
	for _, f := range []string{"goroutine-debug1.txt", "version.json", "metrics.txt"} {
		if _, err := os.Stat(filepath.Join(sample, f)); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "manifest.json")); err != nil {
		t.Errorf("no manifest: %v", err)
	}
}
