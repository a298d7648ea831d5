package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// partialCapture writes a copy of the t2 capture whose goroutine dump is
// dump (the other files as captured) and returns its directory.
func partialCapture(t *testing.T, dump []byte, files ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range files {
		b, err := os.ReadFile(golden.Fixture("t2", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "goroutine-debug2.txt"), dump, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func t2Dump(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(golden.Fixture("t2", "goroutine-debug2.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAnalyzePartialDumps: a cut goroutine dump is read as partial. Its
// complete goroutines are decided, the coverage is named, and the exit
// code follows the findings: 1 when one reaches --fail-on, otherwise 2 with
// "incomplete", never 0 (a partial dump is never an all clear).
func TestAnalyzePartialDumps(t *testing.T) {
	t.Parallel()
	dump := t2Dump(t)
	lines := bytes.SplitAfter(dump, []byte("\n"))
	// Cut mid-line in the last third of the dump, after the stuck watcher
	// (goroutine 33988, line 30165) ended: 30400 lines and half of the next.
	midLine := append(bytes.Join(lines[:30400], nil), lines[30400][:len(lines[30400])/2]...)
	// head -n 30089 goroutine-debug2.txt: inside a goroutine's frames, at a
	// line boundary, before the stuck watcher.
	headN := bytes.Join(lines[:30089], nil)
	// A whole-looking dump (cut between two goroutines) holding half the
	// goroutines go_goroutines counts.
	half := bytes.Join(lines[:bytes.Count(dump, []byte("\n"))/2], nil)
	half = half[:bytes.LastIndex(half, []byte("\n\ngoroutine "))+1]

	// Cut mid-line at two thirds of its bytes: both initial-phase watchers
	// (lines 29744 and 30165) are after the cut.
	twoThirds := dump[:len(dump)*2/3]
	if twoThirds[len(twoThirds)-1] == '\n' {
		twoThirds = twoThirds[:len(twoThirds)-1]
	}

	all := []string{"apf-requests.txt", "metrics.txt", "captured-at.txt"}
	tests := []struct {
		name     string
		dir      string
		args     []string
		code     int
		wantOut  []string
		wantErr  string
		wantNone []string
	}{
		{
			name: "cut mid-line in its last third: the stuck watch is found",
			dir:  partialCapture(t, midLine, all...),
			code: ExitFindings,
			wantOut: []string{
				"StuckInitialEvents   critical   paced-reader | slow-informer",
				"Incomplete (not decided, not healthy):",
				"partial goroutine dump, covering 2211 of 2230 goroutines (go_goroutines): the dump is cut: it ends in the middle of line 30401",
			},
			// Both requests are candidates of the two covered watchers,
			// so neither can belong to a watcher after the cut.
			wantNone: []string{"UndecidedInitialEvents"},
		},
		{
			name: "cut mid-line at two thirds: the watches after the cut are suspects, not healthy",
			dir:  partialCapture(t, twoThirds, all...),
			code: ExitError,
			wantOut: []string{
				"UndecidedInitialEvents   warning    slow-informer",
				"UndecidedInitialEvents   warning    paced-reader",
				"partial goroutine dump, covering 1",
			},
			wantErr:  "error: incomplete: ",
			wantNone: []string{"StuckInitialEvents", "no watch stuck"},
		},
		{
			name:     "head -n 30089",
			dir:      partialCapture(t, headN),
			code:     ExitError,
			wantOut:  []string{"partial goroutine dump, covering 2205 goroutines, of an unknown total: the dump is cut: its last goroutine"},
			wantErr:  "error: incomplete: nothing at or above --fail-on in what was decided, but ",
			wantNone: []string{"no watch stuck in the initial-events replay"},
		},
		{
			name: "head -n 30089 with APF: the missing watchers' requests are suspects",
			dir:  partialCapture(t, headN, all...),
			args: []string{"--fail-on", "warning"},
			code: ExitFindings,
			// The covered watcher is ambiguous between both requests: one
			// of them belongs to the watcher after the cut.
			wantOut: []string{"UndecidedInitialEvents   warning    paced-reader | slow-informer", "1 of these 2 requests, candidates of watchers in the covered part, belong to watchers in the missing part"},
		},
		{
			name:    "fewer goroutines than go_goroutines",
			dir:     partialCapture(t, half, "metrics.txt"),
			code:    ExitError,
			wantOut: []string{"partial goroutine dump, covering 1", " of 2230 goroutines (go_goroutines): it holds 1"},
			wantErr: "error: incomplete: ",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"analyze", tc.dir, "-o", "wide"}, tc.args...)
			code, out, errOut := run(t, nil, args...)
			if code != tc.code {
				t.Errorf("exit code = %d, want %d; stderr: %s", code, tc.code, errOut)
			}
			for _, w := range tc.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("report lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.wantNone {
				if strings.Contains(out, w) {
					t.Errorf("report has %q:\n%s", w, out)
				}
			}
			if !strings.HasPrefix(errOut, tc.wantErr) || (tc.wantErr == "") != (errOut == "") {
				t.Errorf("stderr = %q, want it to start with %q", errOut, tc.wantErr)
			}
		})
	}
}

// TestAnalyzeUndecidedIsNotHealthy: a debug=1 dump or a protobuf profile
// alone cannot tell stuck from slow: with --fail-on info it exits 2 with
// "incomplete", not 0.
func TestAnalyzeUndecidedIsNotHealthy(t *testing.T) {
	t.Parallel()
	for _, f := range []string{"goroutine-debug1.txt", "goroutine.pb.gz"} {
		t.Run(f, func(t *testing.T) {
			code, out, errOut := run(t, nil, "analyze", golden.Fixture("t2", f), "--fail-on", "info", "-o", "json")
			if code != ExitError || !strings.HasPrefix(errOut, "error: incomplete: ") {
				t.Errorf("exit %d, stderr %q; want 2 and an \"incomplete\" error", code, errOut)
			}
			if r := decodeReport(t, out); len(r.Findings) != 0 {
				t.Errorf("findings %+v, want none", r.Findings)
			}
			if !strings.Contains(out, `"incomplete": [`) {
				t.Errorf("JSON lacks incomplete[]:\n%s", out)
			}
		})
	}
}
