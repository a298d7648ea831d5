package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
)

func runNoWait(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	clk := fakeapiserver.NoWaitClock{FakeClock: testingclock.NewFakeClock(time.Date(2026, 11, 29, 10, 23, 9, 0, time.UTC)), T: t}
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	code := execute(newCmdRoot(streams, clk), streams, args)
	return code, out.String(), errOut.String()
}

// TestDiagnoseDeadAddressFailsFast: `diagnose --apiserver 127.0.0.1:1`
// exits 2 after the refused probe, without waiting out --interval (it
// used to take 70 s). The time itself is measured in the README, not here.
func TestDiagnoseDeadAddressFailsFast(t *testing.T) {
	t.Parallel()
	a := fakeapiserver.Start(t, golden.Fixture("t2"))
	kc := fakeapiserver.Kubeconfig(t, a, fakeapiserver.TokenAdmin)
	code, out, errOut := runNoWait(t, "diagnose", "--kubeconfig", kc, "--apiserver", "127.0.0.1:1")
	if code != ExitError {
		t.Errorf("exit %d, want %d", code, ExitError)
	}
	if want := "error: no API server instance could be read: 127.0.0.1:1: not reachable directly: 127.0.0.1:1: GET /version: "; !strings.Contains(errOut, want) || !strings.Contains(errOut, "connection refused") {
		t.Errorf("stderr = %q, want %q ... connection refused", errOut, want)
	}
	if out != "" {
		t.Errorf("stdout = %q, want nothing", out)
	}
	if len(a.Requests()) != 0 {
		t.Errorf("the kubeconfig host was asked %q; --apiserver pins the instance", a.Requests())
	}
}

// TestDiagnoseHangingServerFailsWithinTheRequestTimeout: a server that
// accepts connections and never answers costs one --request-timeout, not
// one per fetch and sample.
func TestDiagnoseHangingServerFailsWithinTheRequestTimeout(t *testing.T) {
	// Not parallel: it waits for a request timeout of a fraction of a
	// second, which the other reads must not reach on a loaded machine.
	a := fakeapiserver.Start(t, golden.Fixture("t2"))
	a.BlockAll = true
	kc := fakeapiserver.Kubeconfig(t, a, fakeapiserver.TokenAdmin)
	code, _, errOut := runNoWait(t, "diagnose", "--kubeconfig", kc, "--apiserver", a.Address(), "--request-timeout", "300ms")
	if code != ExitError || !strings.Contains(errOut, "not reachable directly: no answer within 300ms") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	if got := a.Requests(); len(got) != 1 {
		t.Errorf("requests %q, want the probe alone", got)
	}
}

// TestDiagnoseWithinThePauseBudget: over --max-pause the dump is withheld,
// the suspects of the cheap look are named, and the run exits 2
// "incomplete" naming --force; a cheap look that answers alone exits 0
// without a dump.
func TestDiagnoseWithinThePauseBudget(t *testing.T) {
	t.Parallel()
	t.Run("over the budget", func(t *testing.T) {
		a := fakeapiserver.Start(t, golden.Fixture("t2"))
		kc := fakeapiserver.Kubeconfig(t, a, fakeapiserver.TokenAdmin)
		code, out, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--apiserver", a.Address(), "--samples", "1", "--max-pause", "10ms", "-o", "wide")
		if code != ExitError {
			t.Errorf("exit %d, want %d", code, ExitError)
		}
		for _, want := range []string{
			"UndecidedInitialEvents   warning    slow-informer   watch /api/v1/namespaces/rand2/pods",
			"initializing for 2m29s, holding 1 APF seat(s): stuck or slow: not decided without a goroutine dump; a dump would stop this server for about 91ms",
			"no goroutine dump: a dump would stop this server for about 91ms (estimated from the debug=1 profile: 2223 goroutines, 10868 frames), over the pause budget of 10ms; --force takes it anyway, or raise --max-pause (now 10ms)",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("report lacks %q:\n%s", want, out)
			}
		}
		if !strings.Contains(errOut, "error: incomplete: ") || !strings.Contains(errOut, "pass --force to take the goroutine dump anyway") {
			t.Errorf("stderr:\n%s", errOut)
		}
		for _, p := range a.Requests() {
			if p == "/debug/pprof/goroutine?debug=2" {
				t.Error("the dump was taken over the budget")
			}
		}
	})
	t.Run("nothing initializing longer than the bound", func(t *testing.T) {
		// 20 s after the watches started.
		dir := fakeapiserver.CopyCapture(t, golden.Fixture("t2"), "2026-11-29T10:22:23Z")
		a := fakeapiserver.Start(t, dir)
		kc := fakeapiserver.Kubeconfig(t, a, fakeapiserver.TokenAdmin)
		code, out, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--apiserver", a.Address(), "--samples", "1", "--fail-on", "info")
		if code != ExitOK {
			t.Errorf("exit %d, want 0; stderr:\n%s", code, errOut)
		}
		if !strings.Contains(errOut, "no goroutine dump needed: 2 watch requests initializing (APF dump_requests), none for longer than 30s") {
			t.Errorf("stderr:\n%s", errOut)
		}
		if !strings.Contains(out, "Summary: no watch stuck in the initial-events replay (decided without a debug=2 dump)") {
			t.Errorf("report:\n%s", out)
		}
		for _, p := range a.Requests() {
			if p == "/debug/pprof/goroutine?debug=2" {
				t.Error("a dump was taken although the cheap look answered")
			}
		}
	})
}
