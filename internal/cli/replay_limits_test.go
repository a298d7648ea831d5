package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// TestReplayMemoryLimitAndProgress: a scenario too large for the memory limit
// is refused before it runs, saying the estimate and the limit; printing
// it is still allowed; --from says what it is doing on stderr.
func TestReplayMemoryLimitAndProgress(t *testing.T) {
	t.Parallel()
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
