package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/internal/replay"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// copyCapture copies the real capture t2 (metrics, dumps) into a new
// directory the test may make hostile.
func copyCapture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"metrics.txt", "goroutine-debug2.txt", "apf-requests.txt", "captured-at.txt", "version.json"} {
		b, err := os.ReadFile(golden.Fixture("t2", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// sparse makes a file of size bytes that starts with head and is a hole
// after it: 3 GiB that costs no disk.
func sparse(t *testing.T, path, head string, size int64) {
	t.Helper()
	if err := os.WriteFile(path, []byte(head), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

func TestReplayFromReadsOnlyBoundedRegularFilesInside(t *testing.T) {
	t.Parallel()
	t.Run("a link to /dev/zero is skipped, named", func(t *testing.T) {
		dir := copyCapture(t)
		if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero")); err != nil {
			t.Fatal(err)
		}
		stdout, stderr, code := runReplay(t, "--from", dir, "--print-scenario")
		if code != ExitOK || !strings.Contains(stdout, "count: 2000") {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		want := "replay --from " + dir + ": skipped " + filepath.Join(dir, "zero") + ": a link to a file outside the directory is not read"
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr)
		}
	})
	for _, tc := range []struct{ name, head, want string }{
		{"report.json", `{"kind": "Report", "findings": [`, "holds more than 64 MiB, the most an analyze -o json report may hold"},
		{"blob", "", "holds more than 64 MiB, the most a goroutine-protobuf file may hold"},
	} {
		t.Run("a sparse 3 GiB "+tc.name+" is an error naming it", func(t *testing.T) {
			dir := copyCapture(t)
			p := filepath.Join(dir, tc.name)
			sparse(t, p, tc.head, 3<<30)
			_, stderr, code := runReplay(t, "--from", dir, "--print-scenario")
			if code != ExitError || !strings.Contains(stderr, p+" "+tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, p+" "+tc.want)
			}
		})
	}
}

func TestReplayMemoryEstimateCountsUpdates(t *testing.T) {
	t.Parallel()
	// 100 objects, 10,000 updates/s for 10 minutes: 6 million object
	// versions, once estimated as 64 MiB and OOM-killed.
	sc, err := replay.Parse(strings.NewReader("name: updates\nduration: 10m\nresources:\n- name: pods\n  objects:\n  - {count: 100, bytes: 1000}\n  updates: [{perSecond: 10000}]\nclients:\n- name: c\n  model: healthy\n"))
	if err != nil {
		t.Fatal(err)
	}
	err = checkReplayMemory(nil, sc, map[string]bool{api.ColumnUpstream: true, api.ColumnUnpatched: true}, "4Gi")
	for _, want := range []string{"6000000 updates", "~4 KiB per update", "above --max-memory 4Gi", "perSecond"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want it to say %q", err, want)
		}
	}
	// Without the upstream column, the same fits.
	if err := checkReplayMemory(nil, sc, map[string]bool{api.ColumnUnpatched: true}, "4Gi"); err != nil {
		t.Errorf("unpatched alone: %v", err)
	}
}
