package cli

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// pr141899Capture is a real capture of a kube-apiserver v1.37.2 patched as
// kubernetes PR 141899 describes (test/e2e/patches, mode pr141899, 30 s
// timeout), taken 90 s after the seed reproduction's clients started: the
// stall timeout closed slow-informer's watcher at 30 s, its handler is still
// blocked writing and its APF seat still held.
var pr141899Capture = filepath.Join("..", "..", "testdata", "kube-apiserver-v1.37.2", "pr141899", "t90s")

// TestAnalyzePR141899Capture: analyze must not give an all clear on a
// patched server whose stall timeout left a handler and a seat held.
func TestAnalyzePR141899Capture(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"analyze-pr141899-t90s.txt", []string{"analyze", pr141899Capture}},
		{"analyze-pr141899-t90s.json", []string{"analyze", pr141899Capture, "-o", "json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, nil, tc.args...)
			if code != ExitFindings {
				t.Errorf("exit code = %d, want %d; stderr: %s", code, ExitFindings, errOut)
			}
			golden.Assert(t, tc.name, []byte(out))
		})
	}
	_, out, _ := run(t, nil, "analyze", pr141899Capture, "-o", "json")
	var r struct {
		Findings []struct {
			Type   string `json:"type"`
			Phase  string `json:"phase"`
			Client *struct {
				User  string `json:"user"`
				Seats int    `json:"seats"`
				Match string `json:"match"`
			} `json:"client"`
			Candidates []struct {
				User string `json:"user"`
			} `json:"candidates"`
		} `json:"findings"`
		Summary struct {
			StuckWatches           int `json:"stuckWatches"`
			HeldAfterWatcherClosed int `json:"heldAfterWatcherClosed"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	held := 0
	for _, f := range r.Findings {
		if f.Type != "HeldAfterWatcherClosed" {
			continue
		}
		held++
		// Both clients' requests arrived within 5 ms, are 90 s old and
		// watch the same pods: nothing separates them, so the match is
		// ambiguous and the real client (slow-informer) is a candidate.
		if f.Phase != "closed" || f.Client == nil || f.Client.Seats < 1 || f.Client.Match != "ambiguous" {
			t.Fatalf("held finding: phase %q, client %+v; want closed, a client holding a seat, ambiguous", f.Phase, f.Client)
		}
		found := false
		for _, c := range f.Candidates {
			found = found || c.User == "slow-informer"
		}
		if !found {
			t.Errorf("held finding's candidates %+v lack slow-informer, the client that stopped reading", f.Candidates)
		}
	}
	if held != 1 || r.Summary.HeldAfterWatcherClosed != 1 || r.Summary.StuckWatches != 0 {
		t.Errorf("%d held findings, summary %+v; want exactly one held handler and no stuck watcher", held, r.Summary)
	}
}
