package cli

import (
	"os"
	"strings"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// TestInterruptExits130: Ctrl-C stops cleanly with exit 130 and says so, without
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

// interruptAtOnce makes the next command see Ctrl-C as soon as it listens.
func interruptAtOnce(t *testing.T) {
	t.Helper()
	restore := notifySignals
	notifySignals = func(c chan<- os.Signal) { c <- os.Interrupt }
	t.Cleanup(func() { notifySignals = restore })
}
