package bundle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/golden"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// writeFiles writes name -> content under dir and returns dir.
func writeFiles(t *testing.T, dir string, files map[string][]byte) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func fixture(t *testing.T, capture, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(golden.Fixture(capture, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Defect 4: a stray text file holding "word number" is not /metrics.
func TestDetectRequiresRealExposition(t *testing.T) {
	for _, s := range []string{"ticket 4711\n", "build 3\nfoo 2\n", "attempts{host=\"a\"} 3\n"} {
		if k, _, err := Open(strings.NewReader(s)); err == nil {
			t.Errorf("%q detected as %s, want unrecognized", s, k)
		}
	}
	for _, s := range []string{
		"# HELP go_goroutines Number of goroutines.\n# TYPE go_goroutines gauge\ngo_goroutines 12\n",
		"go_goroutines 12\n",
		"apiserver_flowcontrol_current_executing_seats{priority_level=\"x\"} 3\n",
		"process_start_time_seconds 1.7e9\n",
	} {
		if k, _, err := Open(strings.NewReader(s)); err != nil || k != api.FileMetrics {
			t.Errorf("%q: kind %s, err %v; want metrics", s, k, err)
		}
	}
	dir := writeFiles(t, filepath.Join(t.TempDir(), "t2"), map[string][]byte{
		"metrics.txt": fixture(t, "t2", "metrics.txt"),
		"notes.txt":   []byte("ticket 4711\n"),
	})
	if _, err := Load([]string{dir}, Options{}); err != nil {
		t.Errorf("a stray notes.txt fails a good capture: %v", err)
	}
}

func containsAll(ss []string, subs ...string) bool {
	for _, s := range ss {
		ok := true
		for _, sub := range subs {
			if !strings.Contains(s, sub) {
				ok = false
			}
		}
		if ok {
			return true
		}
	}
	return false
}
