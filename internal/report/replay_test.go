package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/golden"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

func replayGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Assert(t, name, got)
}

// The inputs are real results: `replay SCENARIO --timeline -o json`.
func loadReplay(t *testing.T, name string) *api.Replay {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "replay-"+name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var r api.Replay
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

func TestRenderReplay(t *testing.T) {
	for _, name := range []string{"issue-131721", "half-window-client"} {
		for _, f := range []Format{FormatTable, FormatWide, FormatJSON, FormatYAML} {
			t.Run(name+"/"+string(f), func(t *testing.T) {
				r := loadReplay(t, name)
				var b bytes.Buffer
				if err := Print(&b, r, Options{Format: f}); err != nil {
					t.Fatal(err)
				}
				ext := map[Format]string{FormatTable: ".txt", FormatWide: ".wide.txt", FormatJSON: ".json", FormatYAML: ".yaml"}[f]
				replayGolden(t, "replay-"+name+ext, b.Bytes())
			})
		}
		t.Run(name+"/svg", func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteReplaySVG(&b, loadReplay(t, name)); err != nil {
				t.Fatal(err)
			}
			replayGolden(t, "replay-"+name+".svg", b.Bytes())
		})
	}
}

// TestRenderReplayContract checks the JSON fields scripts rely on.
func TestRenderReplayContract(t *testing.T) {
	var b bytes.Buffer
	if err := Print(&b, loadReplay(t, "issue-131721"), Options{Format: FormatJSON}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Kind     string `json:"kind"`
		Scenario string `json:"scenario"`
		Columns  []struct {
			Name    string `json:"name"`
			Clients []struct {
				Name                string   `json:"name"`
				Outcome             string   `json:"outcome"`
				StoppedAfterSeconds *float64 `json:"stoppedAfterSeconds"`
				EventsReceived      *int64   `json:"eventsReceived"`
			} `json:"clients"`
			BlockedGoroutines *int `json:"blockedGoroutines"`
		} `json:"columns"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range doc.Columns {
		if c.BlockedGoroutines == nil {
			t.Errorf("column %s: no blockedGoroutines", c.Name)
		}
		for _, cl := range c.Clients {
			s := c.Name + "/" + cl.Name + "=" + cl.Outcome
			if cl.StoppedAfterSeconds != nil {
				s += "@" + strings.TrimRight(strings.TrimRight(jsonNumber(*cl.StoppedAfterSeconds), "0"), ".")
			}
			if cl.EventsReceived == nil {
				t.Errorf("%s: no eventsReceived", s)
			}
			got = append(got, s)
		}
	}
	want := []string{
		"upstream/slow-informer=blocked", "upstream/paced-reader=completed", "upstream/healthy-client=completed",
		"unpatched/slow-informer=blocked", "unpatched/paced-reader=completed", "unpatched/healthy-client=completed",
		"pr141899/slow-informer=stopped@30", "pr141899/paced-reader=completed", "pr141899/healthy-client=completed",
		"complete/slow-informer=stopped@30", "complete/paced-reader=completed", "complete/healthy-client=completed",
	}
	if doc.Kind != "Replay" || doc.Scenario != "issue-131721" {
		t.Errorf("kind %q scenario %q, want Replay issue-131721", doc.Kind, doc.Scenario)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func jsonNumber(f float64) string { b, _ := json.Marshal(f); return string(b) + "." }

func TestRenderReplaySVGNeedsTimeline(t *testing.T) {
	r := loadReplay(t, "issue-131721")
	r.Timeline = nil
	err := WriteReplaySVG(&bytes.Buffer{}, r)
	if !errors.Is(err, ErrNoTimeline) {
		t.Errorf("error %v, want ErrNoTimeline", err)
	}
}

// TestRenderReplayUpstreamRelease: the upstream column of another release
// (replay --upstream-release) names its release in its header.
func TestRenderReplayUpstreamRelease(t *testing.T) {
	r := loadReplay(t, "issue-131721")
	r.Columns[0].Release = "v0.38.0-beta.0"
	var b bytes.Buffer
	if err := Print(&b, r, Options{Format: FormatTable}); err != nil {
		t.Fatal(err)
	}
	header, _, _ := strings.Cut(b.String()[strings.Index(b.String(), "CLIENT"):], "\n")
	if !strings.Contains(header, "SCOPE   UPSTREAM V0.38.0-BETA.0 ") {
		t.Errorf("header %q, want the upstream column's release in it", header)
	}
}

// TestRenderReplayLoop: clients the server keeps closing and that come
// back (replay slow-client-busy-resource) show their closures, returns and
// the returns' seat-seconds in their cells, whether they ever had their
// initial events, and the columns' returns.
func TestRenderReplayLoop(t *testing.T) {
	for _, f := range []Format{FormatTable, FormatWide} {
		t.Run(string(f), func(t *testing.T) {
			var b bytes.Buffer
			if err := Print(&b, loadReplay(t, "slow-client-busy-resource"), Options{Format: f}); err != nil {
				t.Fatal(err)
			}
			ext := map[Format]string{FormatTable: ".txt", FormatWide: ".wide.txt"}[f]
			replayGolden(t, "replay-slow-client-busy-resource"+ext, b.Bytes())
			for _, want := range []string{
				"closed 3 times, back 2 (38 seat-seconds), initial events by t=4m5s; last stopped at t=4m13s",
				"closed 3 times, back 2 (38 seat-seconds), never had its initial events; last stopped at t=4m3s",
				"CLIENT RETURNS   RETURNS' SEAT-SECONDS",
			} {
				if !strings.Contains(b.String(), want) {
					t.Errorf("no %q in:\n%s", want, b.String())
				}
			}
		})
	}
}
