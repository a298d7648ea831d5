package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// TestAnalyzeDumpOfAnotherProcessIsNotAllClear: a debug=2 dump of a Go program that is not kube-apiserver is
// not an all clear: exit 2, saying so, even with --fail-on info.
func TestAnalyzeDumpOfAnotherProcessIsNotAllClear(t *testing.T) {
	t.Parallel()
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
	// Nor does its summary say all clear of another process: it is
	// incomplete, and says why.
	if strings.Contains(out, "no watch stuck") || !strings.Contains(out, "incomplete") || !strings.Contains(out, "its goroutine dump holds no kube-apiserver code") {
		t.Errorf("the report reads as a complete answer:\n%s", out)
	}
}

// TestControlCharactersAreEscaped: text from dumps is stripped of control characters before it
// reaches a terminal.
func TestControlCharactersAreEscaped(t *testing.T) {
	t.Parallel()
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
