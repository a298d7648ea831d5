package bundle

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/golden"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// TestKindsTable holds the table to what the code and the real captures
// do: every kind has one row and a distinct file name, every file of a
// real capture is detected as the kind whose file name it has, and the
// richest goroutine input ranks first.
func TestKindsTable(t *testing.T) {
	all := []api.FileKind{api.FileGoroutineDebug2, api.FileGoroutineDebug1, api.FileGoroutineProfile,
		api.FileAPFRequests, api.FileAPFLevels, api.FileMetrics, api.FileVersion, api.FileCapturedAt,
		api.FileManifest, api.FileTrace, api.FileAuditLog}
	names := map[string]api.FileKind{}
	for _, k := range all {
		ki, ok := Kind(k)
		if !ok {
			t.Errorf("kind %q has no row in Kinds", k)
			continue
		}
		if ki.FileName == "" || names[ki.FileName] != "" {
			t.Errorf("kind %q: file name %q empty or shared with %q", k, ki.FileName, names[ki.FileName])
		}
		names[ki.FileName] = k
	}
	if len(Kinds) != len(all) {
		t.Errorf("Kinds has %d rows, want %d", len(Kinds), len(all))
	}
	for _, capture := range []string{"t1", "t2"} {
		entries, err := os.ReadDir(golden.Fixture(capture))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			want, ok := names[e.Name()]
			if !ok {
				t.Errorf("%s/%s: no kind has this file name", capture, e.Name())
				continue
			}
			f, err := os.Open(filepath.Join(golden.Fixture(capture), e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := Open(f)
			f.Close()
			if err != nil || got != want {
				t.Errorf("%s/%s detected as %q (%v), want %q", capture, e.Name(), got, err, want)
			}
		}
	}
	var ranked []api.FileKind
	for _, ki := range Kinds {
		if ki.GoroutineRank > 0 {
			ranked = append(ranked, ki.Kind)
		}
	}
	if diff := cmp.Diff([]api.FileKind{api.FileGoroutineDebug2, api.FileGoroutineDebug1, api.FileGoroutineProfile}, ranked); diff != "" {
		t.Errorf("goroutine kinds (-want +got):\n%s", diff)
	}
	if !(rank(api.FileGoroutineDebug2) > rank(api.FileGoroutineProfile) && rank(api.FileGoroutineProfile) > rank(api.FileGoroutineDebug1)) {
		t.Error("a debug=2 dump must outrank a protobuf profile, which outranks a debug=1 dump")
	}
}

func TestFileNameAndPath(t *testing.T) {
	for k, want := range map[api.FileKind][2]string{
		api.FileGoroutineDebug2: {"goroutine-debug2.txt", "/debug/pprof/goroutine?debug=2"},
		api.FileAPFRequests:     {"apf-requests.txt", "/debug/api_priority_and_fairness/dump_requests?includeRequestDetails=1"},
		api.FileCapturedAt:      {"captured-at.txt", ""},
		api.FileTrace:           {"trace.out", "/debug/pprof/trace"},
		api.FileKind("nope"):    {"", ""},
	} {
		if got := [2]string{FileName(k), Path(k)}; got != want {
			t.Errorf("%q: FileName, Path = %q, want %q", k, got, want)
		}
	}
}
