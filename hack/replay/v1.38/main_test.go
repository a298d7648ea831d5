package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/replay"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// replayOn runs the program on a scenario's YAML and decodes its Replay
// document.
func replayOn(t *testing.T, scenario []byte) *api.Replay {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := run(context.Background(), nil, bytes.NewReader(scenario), &out, &errOut); err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, errOut.String())
	}
	var res api.Replay
	dec := json.NewDecoder(&out)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&res); err != nil {
		t.Fatal(err)
	}
	if len(res.Columns) != 1 {
		t.Fatalf("%d columns, want the upstream one", len(res.Columns))
	}
	if got, want := res.Columns[0].Release, "v0.38.0-beta.0"; got != want {
		t.Errorf("release %q, want %q", got, want)
	}
	return &res
}

// outcomes maps each client of the column to its outcome.
func outcomes(c api.Column) map[string]api.Outcome {
	out := map[string]api.Outcome{}
	for _, cl := range c.Clients {
		out[cl.Name] = cl.Outcome
	}
	return out
}

// TestSeedScenarioOnV138 replays the seed reproduction (issue-131721) on
// v0.38.0-beta.0's cacher: as on the real v1.38.0-beta.0 server
// (TestNewerReleaseDiagnose), slow-informer's watcher stays blocked in its
// initial events, read from this process's goroutines in the 1.38 shape
// (processInitialEvents), and the others complete.
func TestSeedScenarioOnV138(t *testing.T) {
	src, err := replay.BuiltinSource("issue-131721")
	if err != nil {
		t.Fatal(err)
	}
	col := replayOn(t, src).Columns[0]
	want := map[string]api.Outcome{"slow-informer": api.OutcomeBlocked, "paced-reader": api.OutcomeCompleted, "healthy-client": api.OutcomeCompleted}
	if diff := cmp.Diff(want, outcomes(col)); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	if col.BlockedGoroutines != 1 || col.HandlersBlockedInWrite != 1 {
		t.Errorf("%d watcher goroutines blocked and %d handlers blocked writing, want 1 and 1", col.BlockedGoroutines, col.HandlersBlockedInWrite)
	}
	for _, c := range col.Clients {
		if c.Name == "paced-reader" && (c.InitialDoneAtSeconds == nil || *c.InitialDoneAtSeconds != 800) {
			t.Errorf("paced-reader's initial events done at %v, want 800 s", c.InitialDoneAtSeconds)
		}
	}
}

// TestQuietAndBusyOnV138 replays TestBlockedReplayQuietAndBusy's workload
// on v0.38.0-beta.0's cacher and holds it to what the real v1.38.0-beta.0
// server did (docs/versions.md): the dispatcher terminates the busy
// watcher (one terminated watcher), gracefully, so both replays stay
// blocked with their handlers writing and their seats held, and no client
// is told.
func TestQuietAndBusyOnV138(t *testing.T) {
	src, err := os.ReadFile("testdata/quiet-and-busy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	col := replayOn(t, src).Columns[0]
	want := map[string]api.Outcome{"quiet-informer": api.OutcomeBlocked, "busy-informer": api.OutcomeBlocked}
	if diff := cmp.Diff(want, outcomes(col)); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	for _, c := range col.Clients {
		if !c.HandlerBlockedInWrite || c.ClientTold || c.APFSeatSeconds == 0 {
			t.Errorf("%s: handler blocked writing %v, told %v, %v APF seat-seconds; want the handler writing, the seat held, the client not told", c.Name, c.HandlerBlockedInWrite, c.ClientTold, c.APFSeatSeconds)
		}
	}
	var terminated int64
	for _, c := range col.Counters {
		terminated += c.TerminatedWatchers
	}
	if terminated != 1 || col.BlockedGoroutines != 2 {
		t.Errorf("%d watchers terminated by the dispatcher, %d blocked goroutines; want 1 (the busy one, gracefully) and 2", terminated, col.BlockedGoroutines)
	}
}

func TestRunRefusesArguments(t *testing.T) {
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"issue-131721"}, strings.NewReader(""), &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "the scenario comes on stdin") {
		t.Errorf("run with an argument: %v, want a refusal", err)
	}
}
