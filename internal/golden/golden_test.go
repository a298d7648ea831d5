package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	failures []string
	fatal    bool
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	r.fatal = true
}

func TestAssertFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.txt")
	if err := os.WriteFile(path, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &recorder{TB: t}
	AssertFile(r, path, []byte("a\nb\n"))
	if len(r.failures) != 0 {
		t.Errorf("equal content: failures %q", r.failures)
	}
	AssertFile(r, path, []byte("a\nc\n"))
	if len(r.failures) != 1 || !strings.Contains(r.failures[0], "mismatch (-want +got)") || !strings.Contains(r.failures[0], `"a\nc\n"`) {
		t.Errorf("changed content: failures %q, want one diff", r.failures)
	}
	r = &recorder{TB: t}
	AssertFile(r, filepath.Join(t.TempDir(), "missing.txt"), nil)
	if !r.fatal || !strings.Contains(r.failures[0], "-update") {
		t.Errorf("missing file: failures %q, want a fatal pointing at -update", r.failures)
	}
}

// TestAssertTakesAName: the one naming scheme is enforced, a path is
// refused before any file is read or written.
func TestAssertTakesAName(t *testing.T) {
	for _, name := range []string{"", filepath.Join("testdata", "x.txt"), "../x.txt"} {
		r := &recorder{TB: t}
		Assert(r, name, nil)
		if !r.fatal || len(r.failures) != 1 || !strings.Contains(r.failures[0], "want a file name") {
			t.Errorf("Assert(%q): failures %q, want a fatal", name, r.failures)
		}
	}
}

func TestRootAndFixture(t *testing.T) {
	if got, want := Root(), filepath.Join("..", ".."); got != want {
		t.Errorf("Root() = %q, want %q from internal/golden", got, want)
	}
	if _, err := os.Stat(Fixture("t2", "goroutine-debug1.txt")); err != nil {
		t.Errorf("Fixture: %v", err)
	}
}
