package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/dumpgen"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// deriveV138 writes the v1.37.2 seed capture src to dst with its watcher
// goroutines rewritten to the v1.38.0-beta.0 shape (dumpgen.Debug2To138
// and its siblings) and its version files saying v1.38.0-beta.0. DERIVED,
// NOT CAPTURED: it tests the classifier's reading of the v1.38 frames as
// the upstream source draws them, and proves nothing of a real server.
func deriveV138(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		switch e.Name() {
		case "goroutine-debug2.txt":
			b, err = dumpgen.Debug2To138(b)
		case "goroutine-debug1.txt":
			b, err = dumpgen.Debug1To138(b)
		case "goroutine.pb.gz":
			b, err = dumpgen.ProfileTo138(b)
		case "version.json", "metrics.txt":
			s := strings.ReplaceAll(string(b), `v1.37.2`, `v1.38.0-beta.0`)
			s = strings.ReplaceAll(s, `"minor": "37"`, `"minor": "38"`)
			b = []byte(strings.ReplaceAll(s, `minor="37"`, `minor="38"`))
		}
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDerivedV138ShapeFindsTheSame analyzes the seed capture with its
// watchers in the v1.38 shape (process -> processInitialEvents ->
// sendWatchCacheEvent; deriveV138) and wants v1.37.2's findings, each
// watcher's phase, send, handler and APF goroutine included, and its
// verdicts (slow-informer stuck, paced-reader slow, exit 1); and from the
// debug=1 and protobuf profiles the same phase counts.
func TestDerivedV138ShapeFindsTheSame(t *testing.T) {
	orig := filepath.Dir(golden.Fixture("t1"))
	dir := filepath.Join(t.TempDir(), "seed-repro")
	for _, s := range []string{"t1", "t2"} {
		deriveV138(t, golden.Fixture(s), filepath.Join(dir, s))
	}
	report := func(args ...string) (int, api.Report) {
		t.Helper()
		code, out, errOut := run(t, nil, append([]string{"analyze", "-o", "json"}, args...)...)
		var r api.Report
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("analyze %v: %v; stderr: %s", args, err, errOut)
		}
		return code, r
	}
	for _, sc := range []struct {
		name  string
		parts [][]string
	}{
		{"t1+t2", [][]string{{"t1"}, {"t2"}}},
		{"t2", [][]string{{"t2"}}},
		{"debug1", [][]string{{"t2", "goroutine-debug1.txt"}, {"t2", "apf-requests.txt"}, {"t2", "captured-at.txt"}}},
		{"protobuf", [][]string{{"t2", "goroutine.pb.gz"}}},
	} {
		t.Run(sc.name, func(t *testing.T) {
			args := func(root string) []string {
				var out []string
				for _, p := range sc.parts {
					out = append(out, filepath.Join(append([]string{root}, p...)...))
				}
				return out
			}
			wantCode, want := report(args(orig)...)
			gotCode, got := report(args(dir)...)
			if gotCode != wantCode {
				t.Errorf("exit code = %d, want %d (v1.37.2's)", gotCode, wantCode)
			}
			if d := cmp.Diff(want.Summary, got.Summary); d != "" {
				t.Errorf("summary differs from v1.37.2's (-want +got):\n%s", d)
			}
			// The findings name the captures by their directories.
			gotFindings, err := json.Marshal(got.Findings)
			if err != nil {
				t.Fatal(err)
			}
			wantFindings, err := json.Marshal(want.Findings)
			if err != nil {
				t.Fatal(err)
			}
			// The evidence names the loop each release replays in.
			gotText := strings.ReplaceAll(string(gotFindings), dir, orig)
			if strings.Contains(string(wantFindings), "from processInterval") && !strings.Contains(gotText, "from processInitialEvents") {
				t.Errorf("the v1.38 evidence does not name processInitialEvents")
			}
			gotText = strings.ReplaceAll(gotText, "from processInitialEvents", "from processInterval")
			if d := cmp.Diff(string(wantFindings), gotText); d != "" {
				t.Errorf("findings differ from v1.37.2's (-want +got):\n%s", d)
			}
			if len(got.APIServers) != 1 || len(want.APIServers) != 1 {
				t.Fatalf("API servers: got %d, want 1", len(got.APIServers))
			}
			g, w := got.APIServers[0], want.APIServers[0]
			if d := cmp.Diff([]any{w.Watchers, w.InitialPhase, w.PhaseCounts}, []any{g.Watchers, g.InitialPhase, g.PhaseCounts}); d != "" {
				t.Errorf("watchers, initial-phase watchers, phase counts differ from v1.37.2's (-want +got):\n%s", d)
			}
		})
	}
	// The reference itself: slow-informer stuck in its replay, blocked in
	// sendWatchCacheEvent, linked to its handler and APF goroutine.
	_, r := report(filepath.Join(dir, "t1"), filepath.Join(dir, "t2"))
	var stuck []api.Finding
	for _, f := range r.Findings {
		if f.Type == api.StuckInitialEvents {
			stuck = append(stuck, f)
		}
	}
	if len(stuck) != 1 || !slices.Contains(append(stuck[0].CandidateUsers(), clientUser(stuck[0])), "slow-informer") {
		t.Fatalf("stuck findings = %+v, want one naming slow-informer (or among its candidates)", stuck)
	}
	if w := stuck[0].Watcher; w.Phase != api.PhaseInitial || !w.InSend || !w.Blocked || w.Handler == nil || w.APFGoroutineID == 0 {
		t.Errorf("stuck watcher = %+v: want phase initial, blocked in send, with its handler and APF goroutine", w)
	}
}

// clientUser is the user a finding names, "" when it names none.
func clientUser(f api.Finding) string {
	if f.Client == nil {
		return ""
	}
	return f.Client.User
}

// TestDerivedV138DumpsAreRewritten guards the test above against a
// rewrite that leaves the v1.37 shape in place.
func TestDerivedV138DumpsAreRewritten(t *testing.T) {
	dir := t.TempDir()
	deriveV138(t, golden.Fixture("t2"), dir)
	for _, name := range []string{"goroutine-debug2.txt", "goroutine-debug1.txt"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		if strings.Contains(s, "processInterval") || !strings.Contains(s, "(*cacheWatcher).processInitialEvents") || strings.Contains(s, "k8s.io/apiserver@v0.37.2") {
			t.Errorf("%s still holds the v1.37 shape", name)
		}
	}
}

// TestNewerReleaseIsNeverAllClear analyzes a capture with no stuck watch
// (the patched server's, pr141899/t90s) as its own release, as v1.38
// (proven: nothing said) and as v1.39 (newer than every table: a note and
// incomplete, exit 2, never "no watch stuck").
func TestNewerReleaseIsNeverAllClear(t *testing.T) {
	src := filepath.Join("..", "..", "testdata", "kube-apiserver-v1.37.2", "pr141899", "t90s")
	for _, tc := range []struct {
		version    string
		code       int
		note       string
		incomplete bool
	}{
		{"v1.37.2", ExitOK, "", false},
		{"v1.38.0-beta.0", ExitOK, "", false},
		{"v1.39.0", ExitError, "kube-apiserver v1.39.0 is newer than v1.38.0-beta.0, the newest release whose watcher frames this build knows", true},
	} {
		t.Run(tc.version, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "t90s")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			entries, err := os.ReadDir(src)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				b, err := os.ReadFile(filepath.Join(src, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				if e.Name() == "version.json" || e.Name() == "metrics.txt" {
					b = []byte(strings.ReplaceAll(string(b), "v1.37.2", tc.version))
				}
				if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			code, out, errOut := run(t, nil, "analyze", "--fail-on", failOnNone, "-o", "json", dir)
			if code != tc.code {
				t.Errorf("exit code = %d, want %d; stderr: %s", code, tc.code, errOut)
			}
			var r api.Report
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("%v; stderr: %s", err, errOut)
			}
			if r.Summary.StuckWatches != 0 || len(r.APIServers) != 1 {
				t.Fatalf("want the capture's own verdict (none stuck) on one server, got %+v", r.Summary)
			}
			var noted bool
			for _, n := range r.APIServers[0].Notes {
				noted = noted || (tc.note != "" && strings.Contains(n, tc.note) && strings.Contains(n, "cacheWatcher goroutines"))
			}
			if noted != (tc.note != "") {
				t.Errorf("notes %q: want one saying %q with what was recognised", r.APIServers[0].Notes, tc.note)
			}
			if got := len(r.Incomplete) > 0; got != tc.incomplete {
				t.Errorf("incomplete = %q, want incomplete %v", r.Incomplete, tc.incomplete)
			}
		})
	}
}

// TestAnalyzeV138Golden: the real v1.38.0-beta.0 seed capture (its watcher
// loop rewritten upstream: process -> processInitialEvents ->
// sendWatchCacheEvent) as analyze prints it, from both samples, the
// debug=1 profile with the APF dump, the protobuf profile and the trace
// bundle.
func TestAnalyzeV138Golden(t *testing.T) {
	seed := func(parts ...string) string {
		return filepath.Join(append([]string{"..", "..", "testdata", "kube-apiserver-v1.38.0-beta.0"}, parts...)...)
	}
	t1, t2 := seed("seed-repro", "t1"), seed("seed-repro", "t2")
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"analyze-v1.38-t1-t2.txt", []string{"analyze", t1, t2}, ExitFindings},
		{"analyze-v1.38-t1-t2.json", []string{"analyze", t1, t2, "-o", "json"}, ExitFindings},
		{"analyze-v1.38-t2-debug1-apf-aged.txt", []string{"analyze", filepath.Join(t2, "goroutine-debug1.txt.gz"), filepath.Join(t2, "apf-requests.txt"), filepath.Join(t2, "captured-at.txt")}, ExitError},
		{"analyze-v1.38-t2-protobuf.json", []string{"analyze", filepath.Join(t2, "goroutine.pb.gz"), "-o", "json"}, ExitError},
		{"analyze-v1.38-trace-seed.txt", []string{"analyze", seed("trace-seed", "bundle")}, ExitFindings},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, nil, tc.args...)
			if code != tc.code {
				t.Errorf("exit code = %d, want %d; stderr: %s", code, tc.code, errOut)
			}
			golden.Assert(t, tc.name, []byte(out))
		})
	}
	// Independently of the goldens: each initial-phase watcher linked as on
	// v1.37.2, to its handler (HTTP/2, Go 1.27's net/http/internal/http2)
	// and to its APF goroutine; slow-informer's blocked writing.
	_, out, _ := run(t, nil, "analyze", t1, t2, "-o", "json")
	var r api.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	blocks := map[api.FindingType]api.HandlerBlock{}
	for _, f := range r.Findings {
		w := f.Watcher
		if w.Phase != api.PhaseInitial || !w.InSend || w.Handler == nil || w.Handler.Transport != "http2" || w.APFGoroutineID == 0 || w.Handler.ConnGoroutineID == 0 {
			t.Errorf("%s watcher %+v: want initial, in send, linked to an HTTP/2 handler, its connection and its APF goroutine", f.Type, w)
			continue
		}
		blocks[f.Type] = w.Handler.Block
	}
	if d := cmp.Diff(map[api.FindingType]api.HandlerBlock{api.StuckInitialEvents: api.HandlerClientNotReading, api.SlowInitialEvents: api.HandlerClientNotReading}, blocks); d != "" {
		t.Errorf("handler blocks (-want +got):\n%s", d)
	}
}
