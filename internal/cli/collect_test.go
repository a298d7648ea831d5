package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// TestInterruptedCollectKeepsTheBundle: Ctrl-C during collect keeps a bundle analyze reads
// and says what was written.
//
// Not parallel: interruptAtOnce replaces the signal relay of the whole
// package, so a command of a test running beside it was interrupted too
// (TestDiagnoseTwoSamplesPinned exited 130 in a CI run).
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
