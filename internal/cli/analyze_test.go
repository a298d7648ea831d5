package cli

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// run executes the command tree like main does and returns the exit code,
// stdout and stderr.
func run(t *testing.T, stdin []byte, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: bytes.NewReader(stdin), Out: &out, ErrOut: &errOut}
	code := Main(streams, args)
	return code, out.String(), errOut.String()
}

func TestAnalyzeGolden(t *testing.T) {
	t.Parallel()
	t1, t2 := golden.Fixture("t1"), golden.Fixture("t2")
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"analyze-t2.txt", []string{"analyze", t2}, ExitFindings},
		{"analyze-t2.wide.txt", []string{"analyze", t2, "-o", "wide"}, ExitFindings},
		{"analyze-t2.json", []string{"analyze", t2, "-o", "json"}, ExitFindings},
		{"analyze-t2.yaml", []string{"analyze", t2, "-o", "yaml"}, ExitFindings},
		{"analyze-t1.txt", []string{"analyze", t1}, ExitOK},
		{"analyze-t1-t2.txt", []string{"analyze", t1, t2}, ExitFindings},
		{"analyze-t1-t2.json", []string{"analyze", t1, t2, "-o", "json"}, ExitFindings},
		{"analyze-seed-repro-dir.json", []string{"analyze", filepath.Dir(t1), "-o", "json"}, ExitFindings},
		{"analyze-t2-debug2-only.json", []string{"analyze", filepath.Join(t2, "goroutine-debug2.txt"), "-o", "json"}, ExitFindings},
		{"analyze-t2-debug2-only.txt", []string{"analyze", filepath.Join(t2, "goroutine-debug2.txt")}, ExitFindings},
		// Undecided is not healthy: exit 2, "incomplete".
		{"analyze-t2-debug1.txt", []string{"analyze", filepath.Join(t2, "goroutine-debug1.txt"), filepath.Join(t2, "apf-requests.txt")}, ExitError},
		{"analyze-t2-protobuf.json", []string{"analyze", filepath.Join(t2, "goroutine.pb.gz"), "-o", "json"}, ExitError},
		// The cheap look with ages: the stuck watch is a suspect, named.
		{"analyze-t2-debug1-apf-aged.txt", []string{"analyze", filepath.Join(t2, "goroutine-debug1.txt"), filepath.Join(t2, "apf-requests.txt"), filepath.Join(t2, "captured-at.txt")}, ExitError},
		{"analyze-t2-protobuf-fail-on-warning.txt", []string{"analyze", filepath.Join(t2, "goroutine.pb.gz"), filepath.Join(t2, "apf-requests.txt"), filepath.Join(t2, "captured-at.txt"), "--fail-on", "warning"}, ExitFindings},
		{"analyze-t2-fail-on-warning.txt", []string{"analyze", filepath.Join(t1, "goroutine-debug2.txt"), "--fail-on", "warning"}, ExitFindings},
		{"analyze-t2-fail-on-none.yaml", []string{"analyze", t2, "--fail-on", "none", "-o", "yaml"}, ExitOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := run(t, nil, tc.args...)
			if code != tc.code {
				t.Errorf("exit code = %d, want %d; stderr: %s", code, tc.code, errOut)
			}
			switch {
			case tc.code == ExitError && !strings.HasPrefix(errOut, "error: incomplete: "):
				t.Errorf("stderr = %q, want an \"incomplete\" error", errOut)
			case tc.code != ExitError && errOut != "":
				t.Errorf("stderr = %q, want nothing", errOut)
			}
			golden.Assert(t, tc.name, []byte(out))
		})
	}
}

// TestAnalyzeSeedReproVerdicts checks the verdicts the issue names on the
// real capture, independently of the golden files.
func TestAnalyzeSeedReproVerdicts(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{golden.Fixture("t2")},
		{golden.Fixture("t1"), golden.Fixture("t2")},
		{filepath.Join(golden.Fixture("t2"), "goroutine-debug2.txt")},
	} {
		t.Run(strings.Join(args, "+"), func(t *testing.T) {
			code, out, errOut := run(t, nil, append([]string{"analyze", "-o", "json"}, args...)...)
			if code != ExitFindings {
				t.Fatalf("exit code %d, stderr %s", code, errOut)
			}
			r := decodeReport(t, out)
			var stuck, slow []finding
			for _, f := range r.Findings {
				switch f.Type {
				case "StuckInitialEvents":
					stuck = append(stuck, f)
				case "SlowInitialEvents":
					slow = append(slow, f)
				default:
					t.Errorf("unexpected finding %s for goroutines %v", f.Type, f.GoroutineIDs)
				}
			}
			if len(stuck) != 1 || stuck[0].GoroutineIDs[0] != 33988 {
				t.Fatalf("want exactly one StuckInitialEvents for goroutine 33988, got %+v", stuck)
			}
			if len(slow) != 1 || slow[0].GoroutineIDs[0] != 33545 {
				t.Fatalf("want the paced reader (goroutine 33545) as SlowInitialEvents, got %+v", slow)
			}
			hasAPF := len(args) > 1 || !strings.HasSuffix(args[0], ".txt")
			c := stuck[0].Client
			switch {
			case hasAPF && c == nil:
				t.Fatal("stuck finding has no client")
			case hasAPF:
				// Same resource, same path, same seats, same age: nothing
				// separates the two initial-phase watches (docs/analyze.md,
				// "Attribution").
				if got := stuck[0].names(); c.Namespace != "rand2" || c.Resource != "pods" || c.Match != "ambiguous" || strings.Join(got, ",") != "paced-reader,slow-informer" {
					t.Errorf("client = %+v, candidates %v, want ambiguous rand2 pods between paced-reader and slow-informer", c, got)
				}
			case c != nil:
				t.Errorf("without an APF dump the finding must name no client, got %+v", c)
			}
		})
	}
}

func TestAnalyzeInputForms(t *testing.T) {
	t.Parallel()
	dump, err := os.ReadFile(filepath.Join(golden.Fixture("t2"), "goroutine-debug2.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(dump)
	zw.Close()
	dir := t.TempDir()
	// A misleading name: kinds are detected from content.
	renamed := filepath.Join(dir, "metrics.txt")
	if err := os.WriteFile(renamed, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	_, want, _ := run(t, nil, "analyze", filepath.Join(golden.Fixture("t2"), "goroutine-debug2.txt"), "-o", "json")
	for name, tc := range map[string]struct {
		stdin []byte
		args  []string
	}{
		"gzip-renamed-file": {nil, []string{"analyze", renamed, "-o", "json"}},
		"stdin-plain":       {dump, []string{"analyze", "-", "-o", "json"}},
		"stdin-gzip":        {gz.Bytes(), []string{"analyze", "-", "-o", "json"}},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := run(t, tc.stdin, tc.args...)
			if code != ExitFindings {
				t.Fatalf("exit code %d, stderr %s", code, errOut)
			}
			gotR, wantR := decodeReport(t, out), decodeReport(t, want)
			if len(gotR.Findings) != len(wantR.Findings) || gotR.Summary != wantR.Summary {
				t.Errorf("findings/summary differ from the plain file:\n got %+v\nwant %+v", gotR.Summary, wantR.Summary)
			}
		})
	}
}

// TestAnalyzeWithoutAnyDumpIsNotAllClear: metrics or APF dumps alone are
// reported, but the run fails: nothing about stuck watches was decided.
// Without a goroutine dump the APF rows are still evidence: each executing
// watch is named, undecided, and the run is incomplete.
func TestAnalyzeWithoutAnyDumpIsNotAllClear(t *testing.T) {
	t2 := golden.Fixture("t2")
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"no capture time", []string{filepath.Join(t2, "metrics.txt"), filepath.Join(t2, "apf-requests.txt")},
			[]string{"2 executing watch requests, and no capture time to age them by", "slow-informer", "paced-reader", "age unknown"}},
		{"aged", []string{filepath.Join(t2, "metrics.txt"), filepath.Join(t2, "apf-requests.txt"), filepath.Join(t2, "captured-at.txt")},
			[]string{"2 watch requests initializing for longer than 30s", "slow-informer", "paced-reader", "initializing for 2m29s"}},
		{"nothing but metrics", []string{filepath.Join(t2, "metrics.txt")}, []string{"nothing diagnosed: no goroutine dump"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, nil, append([]string{"analyze", "-o", "wide"}, tc.args...)...)
			if code != ExitError {
				t.Errorf("exit %d, stderr %q", code, errOut)
			}
			if !containsAll(out+errOut, tc.want...) {
				t.Errorf("report lacks %q:\n%s\n%s", tc.want, out, errOut)
			}
		})
	}
}

func TestAnalyzeErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	dump, err := os.ReadFile(filepath.Join(golden.Fixture("t2"), "goroutine-debug2.txt"))
	if err != nil {
		t.Fatal(err)
	}
	truncated := write("truncated.txt", dump[:200])
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"missing file", []string{"analyze", filepath.Join(dir, "nope")}, `reading "` + filepath.Join(dir, "nope") + `": no such file or directory`},
		{"empty file", []string{"analyze", write("empty.txt", nil)}, "empty.txt: empty input"},
		{"binary file", []string{"analyze", write("bin", []byte{0, 1, 2, 3, 0xff, 0xfe, 0x10, 0x20})}, "bin: unrecognized content: binary data that is not a goroutine profile"},
		{"text of no known kind", []string{"analyze", write("notes.txt", []byte("hello\nworld\n"))}, `notes.txt: unrecognized content: line 1 "hello"`},
		{"dump cut in its first goroutine", []string{"analyze", truncated}, "truncated.txt:1: dump is truncated before its first goroutine ended"},
		{"bad output", []string{"analyze", golden.Fixture("t2"), "-o", "xml"}, `unsupported --output "xml": use one of table, wide, json, yaml`},
		{"bad fail-on", []string{"analyze", golden.Fixture("t2"), "--fail-on", "panic"}, `unsupported --fail-on "panic": use one of critical, warning, info, none`},
		{"bad captured-at", []string{"analyze", golden.Fixture("t2"), "--captured-at", "yesterday"}, `invalid --captured-at "yesterday"`},
		{"bad max-dump-size", []string{"analyze", golden.Fixture("t2"), "--max-dump-size", "1k"}, `invalid --max-dump-size "1k": use a quantity of at least 1Mi, like 128Mi or 1Gi`},
		{"dump over max-dump-size", []string{"analyze", golden.Fixture("t2"), "--max-dump-size", "1Mi"}, "holds more than 1 MiB, the most a goroutine-debug2 file may hold (raise the bound with --max-dump-size)"},
		{"captured-at with two captures", []string{"analyze", golden.Fixture("t1"), golden.Fixture("t2"), "--captured-at", "2026-11-29T10:24:32Z"}, "--captured-at applies to a single capture"},
		{"no args", []string{"analyze"}, "requires at least 1 arg"},
		{"bad flag points to help", []string{"analyze", "--bogus"}, "unknown flag: --bogus\nSee 'kubectl watch-doctor analyze --help' for usage."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := run(t, nil, tc.args...)
			if code != ExitError {
				t.Errorf("exit code = %d, want %d", code, ExitError)
			}
			if out != "" {
				t.Errorf("stdout = %q, want nothing on error", out)
			}
			if !strings.Contains(errOut, tc.wantErr) {
				t.Errorf("stderr = %q, want it to contain %q", errOut, tc.wantErr)
			}
			if strings.Contains(errOut, "Usage:") {
				t.Errorf("a runtime error must not print usage: %q", errOut)
			}
		})
	}
}

// TestAnalyzeTwoCapturesWithoutTimesInReverseOrder: without capture times
// the samples are ordered by goroutine ids, and the stuck watcher stays
// stuck whatever the argument order.
func TestAnalyzeTwoCapturesWithoutTimesInReverseOrder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []string{"t1", "t2"} {
		if err := os.MkdirAll(filepath.Join(dir, c), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"goroutine-debug2.txt", "apf-requests.txt", "metrics.txt"} {
			b, err := os.ReadFile(golden.Fixture(c, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, c, f), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	code, out, errOut := run(t, nil, "analyze", filepath.Join(dir, "t2"), filepath.Join(dir, "t1"), "-o", "json")
	if code != ExitFindings {
		t.Fatalf("exit %d, want %d: %s\n%s", code, ExitFindings, errOut, out)
	}
	r := decodeReport(t, out)
	if r.Summary.StuckWatches != 1 || r.Findings[0].GoroutineIDs[0] != 33988 {
		t.Errorf("want goroutine 33988 stuck, got %+v", r.Findings)
	}
}
