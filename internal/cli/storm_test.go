package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/dumpgen"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// stormBundle writes a capture of n watches stuck in their initial events
// at once, as after an API server restart, with their n executing
// requests in the APF dump (the bundle of wdbench match).
func stormBundle(t *testing.T, n int) string {
	t.Helper()
	set, err := dumpgen.Repo()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	const wait = 5
	if _, err := set.WriteFile(filepath.Join(dir, "goroutine-debug2.txt"), dumpgen.Config{Goroutines: 4*n + 2000, Stuck: n, WaitMinutes: wait, TrimHandlers: true}); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 29, 10, 30, 0, 0, time.UTC)
	var apf bytes.Buffer
	if err := dumpgen.WriteAPFRequests(&apf, n, at.Add(-(wait+1)*time.Minute)); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"apf-requests.txt": apf.Bytes(), "captured-at.txt": []byte(at.Format(time.RFC3339) + "\n")} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestRelistStormReadsAsOne: analyze of a storm of identical stuck watches
// prints a table of a few lines, one row with their COUNT; JSON and -o
// name keep every finding, and both carry the storm as one group. (bench: wdbench match runs it at 50,000.)
func TestRelistStormReadsAsOne(t *testing.T) {
	t.Parallel()
	const n = 1000
	dir := stormBundle(t, n)
	code, out, errOut := run(t, nil, "analyze", dir)
	if code != ExitFindings {
		t.Fatalf("exit %d, want %d: %s", code, ExitFindings, errOut)
	}
	if lines := strings.Count(out, "\n"); lines > 36 {
		t.Errorf("the table of a %d-watch storm has %d lines, want at most 36:\n%.3000s", n, lines, out)
	}
	if !strings.HasPrefix(out, "COUNT   FINDING") || !strings.Contains(out, "\n1000    StuckInitialEvents   critical   ? too many candidates") {
		t.Errorf("no COUNT row for the storm:\n%.3000s", out)
	}
	_, js, _ := run(t, nil, "analyze", dir, "-o", "json")
	var r api.Report
	if err := json.Unmarshal([]byte(js), &r); err != nil || len(r.Findings) != n {
		t.Errorf("JSON: %d findings (%v), want %d", len(r.Findings), err, n)
	}
	// The storm is one group of the model: the table's COUNT row above.
	if len(r.Groups) != 1 {
		t.Fatalf("JSON: %d groups, want 1: %+v", len(r.Groups), r.Groups)
	}
	g := r.Groups[0]
	if g.Type != api.StuckInitialEvents || g.Severity != api.SeverityCritical || g.Client != api.LabelTooManyCandidates || g.Count != n || len(g.Findings) != n {
		t.Errorf("JSON group: %s %s %q count %d, %d members; want StuckInitialEvents critical %q count %d", g.Type, g.Severity, g.Client, g.Count, len(g.Findings), api.LabelTooManyCandidates, n)
	}
	for i, m := range g.Findings {
		if m != i {
			t.Fatalf("JSON group member %d is finding %d, want every finding in order", i, m)
		}
	}
	_, names, _ := run(t, nil, "analyze", dir, "-o", "name")
	if got := strings.Count(names, "\n"); got != n+1 {
		t.Errorf("-o name: %d lines, want one per finding and one for the group, %d", got, n+1)
	}
	if want := "\ngroup/StuckInitialEvents/" + api.LabelTooManyCandidates + "\n"; !strings.HasSuffix(names, want) {
		t.Errorf("-o name does not end with the group's line %q:\n%.300s", want, names[max(0, len(names)-300):])
	}
}
