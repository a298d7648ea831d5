package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/bundle"
	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// TestDiagnoseSetsAsideATraceThatCannotBeLive (issue 35): a server
// answers the trace of a 40 s interval at once with one covering 20 s
// (the real seed server's, whose verdict, believed, is critical). The
// trace is set aside, saying why; nothing critical is reported, no
// goroutine dump is asked for in its place, and the run exits 2, never
// "no watch stuck". The same trace taking the 20 s asked for on the run's
// clock decides, critical.
func TestDiagnoseSetsAsideATraceThatCannotBeLive(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		interval string
		live     bool
		code     int
	}{
		{"40 s asked, 20 s at once", "40s", false, ExitError},
		{"40 s asked, 20 s in 40 s", "40s", true, ExitError},
		{"20 s asked, 20 s in 20 s", "20s", true, ExitFindings},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := fakeapiserver.Start(t, fakeapiserver.TraceSeedSample(t, "1"), fakeapiserver.TraceSeedSample(t, "2"))
			s.TraceBody = fakeapiserver.TraceSeed(t)
			clk := testingclock.NewFakeClock(time.Date(2026, 11, 29, 10, 23, 9, 0, time.UTC))
			if tc.live {
				s.TraceClock = clk
			}
			kc := fakeapiserver.Kubeconfig(t, s, fakeapiserver.TokenAdmin)
			code, out, errOut := runLiveOn(t, clk, "diagnose", "--kubeconfig", kc, "--apiserver", s.Address(), "--evidence", "trace", "--interval", tc.interval, "-o", "json", "-v")
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstderr:\n%s", code, tc.code, errOut)
			}
			r := apiReport(t, out)
			critical := r.MaxSeverity() == api.SeverityCritical
			for _, p := range s.Requests() {
				if strings.Contains(p, "debug=2") {
					t.Errorf("asked for %s: a dump took the trace's place", p)
				}
			}
			incomplete := strings.Join(r.Incomplete, "\n")
			if tc.code == ExitFindings {
				if !critical || strings.Contains(incomplete, "set aside") {
					t.Errorf("a live trace of the interval: critical %v, incomplete %q; want it to decide", critical, r.Incomplete)
				}
				return
			}
			if critical {
				t.Errorf("a critical finding from a trace that cannot be live:\n%s", out)
			}
			for _, want := range []string{"the execution trace was set aside, nothing is decided from it: asked for 40s, it covers 20s", "no goroutine dump took its place"} {
				if !strings.Contains(incomplete, want) {
					t.Errorf("incomplete %q\nwant %q", r.Incomplete, want)
				}
			}
			if !strings.Contains(errOut, "sample 2 takes no goroutine dump in its place (--force takes one)") {
				t.Errorf("stderr does not say no dump takes the trace's place:\n%s", errOut)
			}
			t.Logf("stderr:\n%s\nincomplete:\n%s", errOut, incomplete)
		})
	}
}

// TestAnalyzeOfABundleWhoseTraceWasSetAside (issue 35): collect reads a
// trace that cannot be live (40 s asked, 20 s answered at once), sets it
// aside and keeps no trace file; the bundle's manifest says why, per
// instance. analyze of the bundle does not decide from the samples alone
// as if nothing were missing: it is incomplete, naming the server and
// the reason, and exits 2, as diagnose of the same run does.
func TestAnalyzeOfABundleWhoseTraceWasSetAside(t *testing.T) {
	t.Parallel()
	s := fakeapiserver.Start(t, fakeapiserver.TraceSeedSample(t, "1"), fakeapiserver.TraceSeedSample(t, "2"))
	s.TraceBody = fakeapiserver.TraceSeed(t)
	clk := testingclock.NewFakeClock(time.Date(2026, 11, 29, 10, 23, 9, 0, time.UTC))
	kc := fakeapiserver.Kubeconfig(t, s, fakeapiserver.TokenAdmin)
	dir := filepath.Join(t.TempDir(), "bundle")
	code, _, errOut := runLiveOn(t, clk, "collect", "--kubeconfig", kc, "--apiserver", s.Address(), "--evidence", "trace", "--interval", "40s", "-d", dir)
	if code != ExitOK && code != ExitError {
		t.Fatalf("collect: exit %d\nstderr:\n%s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, bundle.SafeName(s.Address()), "trace.out")); !os.IsNotExist(err) {
		t.Fatalf("the bundle keeps the trace set aside (%v)", err)
	}
	want := s.Address() + ": the execution trace was set aside, nothing is decided from it: asked for 40s, it covers 20s"
	for _, fail := range []string{"none", "critical"} {
		code, out, errOut := runLive(t, "analyze", dir, "--fail-on", fail, "-o", "json")
		r := apiReport(t, out)
		incomplete := strings.Join(r.Incomplete, "\n")
		if code != ExitError || !strings.Contains(incomplete, want) || !strings.Contains(incomplete, "no goroutine dump took its place, so the watches it was chosen to decide are not decided") {
			t.Errorf("analyze --fail-on %s: exit %d, incomplete %q; want %d, saying %q\nstderr:\n%s", fail, code, r.Incomplete, ExitError, want, errOut)
		}
		if r.MaxSeverity() == api.SeverityCritical {
			t.Errorf("analyze --fail-on %s: a critical finding with the trace set aside:\n%s", fail, out)
		}
	}
	code, table, errOut := runLive(t, "analyze", dir)
	if code != ExitError || !strings.Contains(table, "Incomplete (not decided, not healthy):\n") || !strings.Contains(table, "\n  - "+want) {
		t.Errorf("analyze: exit %d, want %d, the table saying it is incomplete:\n%s\nstderr:\n%s", code, ExitError, table, errOut)
	}
	t.Logf("analyze said:\n%s\nstderr:\n%s", table, errOut)
}
