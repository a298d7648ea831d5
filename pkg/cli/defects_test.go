package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"
)

// Defect 1: a debug=2 dump of a Go program that is not kube-apiserver is
// not an all clear: exit 2, saying so, even with --fail-on info.
func TestAnalyzeDumpOfAnotherProcessIsNotAllClear(t *testing.T) {
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
}

// Defect 4: `metrics notes.txt` refuses a file that is not exposition.
func TestMetricsRefusesAStrayNote(t *testing.T) {
	p := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(p, []byte("ticket 4711\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, nil, "metrics", p)
	if code != ExitError || out != "" || !strings.Contains(errOut, "notes.txt: unrecognized content") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
