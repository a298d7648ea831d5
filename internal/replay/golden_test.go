package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	goldenfile "github.com/watch-doctor/watch-doctor/internal/golden"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Assert(t, name, got)
}

// TestBuiltinScenariosGolden replays every built-in scenario on our cacher,
// unpatched and patched, with the timeline, and compares the whole result
// with a golden file: a change of behaviour shows up as a diff. The
// upstream column is compared with the unpatched one in
// internal/replay/upstream (the differential suite).
func TestBuiltinScenariosGolden(t *testing.T) {
	for _, name := range BuiltinNames() {
		t.Run(name, func(t *testing.T) {
			sc, err := Builtin(name)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Run(context.Background(), sc, DefaultBackends(sc, nil), Options{Timeline: true})
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetIndent("", "  ")
			if err := enc.Encode(res); err != nil {
				t.Fatal(err)
			}
			golden(t, name+".json", b.Bytes())
		})
	}
}

// TestMustShow pins the outcomes the replay exists to show.
func TestMustShow(t *testing.T) {
	type outcome struct {
		Client  string
		Column  string
		Outcome api.Outcome
		Stopped float64
	}
	tests := []struct {
		scenario    string
		want        []outcome
		wantBlocked map[string]int
		// wantTerminated counts the watchers the dispatcher closed, when
		// the README says how many.
		wantTerminated map[string]int64
	}{{
		scenario: "issue-131721",
		want: []outcome{
			{"slow-informer", api.ColumnUnpatched, api.OutcomeBlocked, 0},
			{"slow-informer", api.ColumnPR141899, api.OutcomeStopped, 30},
			{"paced-reader", api.ColumnUnpatched, api.OutcomeCompleted, 0},
			{"paced-reader", api.ColumnPR141899, api.OutcomeCompleted, 0},
			{"healthy-client", api.ColumnUnpatched, api.OutcomeCompleted, 0},
			{"healthy-client", api.ColumnPR141899, api.OutcomeCompleted, 0},
		},
		wantBlocked: map[string]int{api.ColumnUnpatched: 1, api.ColumnPR141899: 0},
	}, {
		scenario: "slow-but-progressing",
		want: []outcome{
			{"paced-2.5", api.ColumnUnpatched, api.OutcomeCompleted, 0},
			{"paced-2.5", api.ColumnPR141899, api.OutcomeCompleted, 0},
			{"paced-0.04", api.ColumnUnpatched, api.OutcomeCompleted, 0},
			{"paced-0.04", api.ColumnPR141899, api.OutcomeCompleted, 0},
		},
		wantBlocked: map[string]int{api.ColumnUnpatched: 0, api.ColumnPR141899: 0},
	}, {
		scenario: "half-window-client",
		want: []outcome{
			{"client-go", api.ColumnUnpatched, api.OutcomeCompleted, 0},
			{"client-go", api.ColumnPR141899, api.OutcomeCompleted, 0},
			{"half-window-4mi", api.ColumnUnpatched, api.OutcomeCompleted, 0},
			{"half-window-4mi", api.ColumnPR141899, api.OutcomeStopped, 30},
			{"okhttp-16mi", api.ColumnUnpatched, api.OutcomeCompleted, 0},
			{"okhttp-16mi", api.ColumnPR141899, api.OutcomeStopped, 30},
		},
		wantBlocked: map[string]int{api.ColumnUnpatched: 0, api.ColumnPR141899: 0},
	}, {
		scenario: "streaming-stall",
		want: []outcome{
			{"stalls-after-initial", api.ColumnUnpatched, api.OutcomeStopped, 85},
			{"stalls-after-initial", api.ColumnPR141899, api.OutcomeStopped, 85},
			{"healthy", api.ColumnUnpatched, api.OutcomeCompleted, 0},
			{"healthy", api.ColumnPR141899, api.OutcomeCompleted, 0},
		},
		wantBlocked: map[string]int{api.ColumnUnpatched: 0, api.ColumnPR141899: 0},
	}, {
		// The stalled listers fill their input while they hold the
		// bookmark their client waits for: the dispatcher closes them
		// gracefully (5 terminated), done stays open and their goroutines
		// stay blocked unpatched; patched stops all 5, 30 s after their
		// last send. Every healthy lister completes.
		scenario: "issue-137631",
		want: []outcome{
			{"lister-1", api.ColumnUnpatched, api.OutcomeCompleted, 0},
			{"lister-1", api.ColumnPR141899, api.OutcomeCompleted, 0},
			{"lister-45", api.ColumnUnpatched, api.OutcomeCompleted, 0},
			{"lister-45", api.ColumnPR141899, api.OutcomeCompleted, 0},
			{"stalled-lister-1", api.ColumnUnpatched, api.OutcomeBlocked, 0},
			{"stalled-lister-1", api.ColumnPR141899, api.OutcomeStopped, 30},
			{"stalled-lister-2", api.ColumnUnpatched, api.OutcomeBlocked, 0},
			{"stalled-lister-2", api.ColumnPR141899, api.OutcomeStopped, 30},
			{"stalled-lister-3", api.ColumnUnpatched, api.OutcomeBlocked, 0},
			{"stalled-lister-3", api.ColumnPR141899, api.OutcomeStopped, 30},
			{"stalled-lister-4", api.ColumnUnpatched, api.OutcomeBlocked, 0},
			{"stalled-lister-4", api.ColumnPR141899, api.OutcomeStopped, 30},
			{"stalled-lister-5", api.ColumnUnpatched, api.OutcomeBlocked, 0},
			{"stalled-lister-5", api.ColumnPR141899, api.OutcomeStopped, 30},
		},
		wantBlocked:    map[string]int{api.ColumnUnpatched: 5, api.ColumnPR141899: 0},
		wantTerminated: map[string]int64{api.ColumnUnpatched: 5, api.ColumnPR141899: 5},
	}, {
		// A 1.38 scenario, as measured on real v1.38.0-beta.0 servers
		// (test/e2e TestBlockedReplayQuietAndBusy, TestPatchedBlockedReplay):
		// the dispatcher closes the busy watcher gracefully, and both stay
		// blocked unpatched (read in 1.38's shape: processInitialEvents
		// under process); the stall timeout stops both 30 s after their
		// last send, the busy one's graceful close notwithstanding.
		scenario: "quiet-and-busy",
		want: []outcome{
			{"quiet-informer", api.ColumnUnpatched, api.OutcomeBlocked, 0},
			{"quiet-informer", api.ColumnPR141899, api.OutcomeStopped, 30},
			{"busy-informer", api.ColumnUnpatched, api.OutcomeBlocked, 0},
			{"busy-informer", api.ColumnPR141899, api.OutcomeStopped, 30},
		},
		wantBlocked:    map[string]int{api.ColumnUnpatched: 2, api.ColumnPR141899: 0},
		wantTerminated: map[string]int64{api.ColumnUnpatched: 1, api.ColumnPR141899: 1},
	}}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			sc, err := Builtin(tt.scenario)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Run(context.Background(), sc, DefaultBackends(sc, nil), Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got []outcome
			blocked := map[string]int{}
			terminated := map[string]int64{}
			for _, col := range res.Columns {
				blocked[col.Name] = col.BlockedGoroutines
				for _, c := range col.Counters {
					terminated[col.Name] += c.TerminatedWatchers
				}
			}
			for _, w := range tt.want {
				for _, col := range res.Columns {
					if col.Name != w.Column {
						continue
					}
					for _, c := range col.Clients {
						if c.Name == w.Client {
							o := outcome{c.Name, col.Name, c.Outcome, 0}
							if c.StoppedAfterSeconds != nil {
								o.Stopped = *c.StoppedAfterSeconds
							}
							got = append(got, o)
						}
					}
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("outcomes (-want +got):\n%s", diff)
			}
			// complete stops the same watchers at the same times as
			// pr141899; only what it frees beside them differs.
			byName := map[string]api.Column{}
			for _, col := range res.Columns {
				byName[col.Name] = col
			}
			for i, c := range byName[api.ColumnPR141899].Clients {
				o := byName[api.ColumnComplete].Clients[i]
				if c.Outcome != o.Outcome || !cmp.Equal(c.StoppedAfterSeconds, o.StoppedAfterSeconds) {
					t.Errorf("%s: pr141899 %s after %v, complete %s after %v", c.Name, c.Outcome, c.StoppedAfterSeconds, o.Outcome, o.StoppedAfterSeconds)
				}
			}
			if blocked[api.ColumnComplete] != blocked[api.ColumnPR141899] || terminated[api.ColumnComplete] != terminated[api.ColumnPR141899] {
				t.Errorf("complete left %d blocked, %d terminated; pr141899 %d, %d", blocked[api.ColumnComplete], terminated[api.ColumnComplete], blocked[api.ColumnPR141899], terminated[api.ColumnPR141899])
			}
			delete(blocked, api.ColumnComplete)
			delete(terminated, api.ColumnComplete)
			if diff := cmp.Diff(tt.wantBlocked, blocked); diff != "" {
				t.Errorf("blocked goroutines at the end (-want +got):\n%s", diff)
			}
			if tt.wantTerminated != nil {
				if diff := cmp.Diff(tt.wantTerminated, terminated); diff != "" {
					t.Errorf("watchers closed by the dispatcher (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestFixedColumnsSeedRepro checks what each fixed column frees in the seed
// reproduction, as measured on the real patched servers (test/e2e
// TestPatchedServers): pr141899 stops the slow informer's watcher but its
// handler stays blocked writing, its seats stay held to the end and its
// client is not told; complete frees the handler and the seats at the stall
// and tells the client.
func TestFixedColumnsSeedRepro(t *testing.T) {
	sc, err := Builtin("issue-131721")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), sc, DefaultBackends(sc, nil), Options{})
	if err != nil {
		t.Fatal(err)
	}
	slow := map[string]api.ClientResult{}
	for _, col := range res.Columns {
		for _, c := range col.Clients {
			if c.Name == "slow-informer" {
				slow[col.Name] = c
			}
		}
	}
	un, pr, co := slow[api.ColumnUnpatched], slow[api.ColumnPR141899], slow[api.ColumnComplete]
	if !pr.HandlerBlockedInWrite || pr.ClientTold {
		t.Errorf("pr141899: handler blocked %t, client told %t; want blocked, not told", pr.HandlerBlockedInWrite, pr.ClientTold)
	}
	if pr.APFSeatSeconds != un.APFSeatSeconds {
		t.Errorf("pr141899 seat-seconds %g, unpatched %g: the seat must stay held until the request ends", pr.APFSeatSeconds, un.APFSeatSeconds)
	}
	if co.HandlerBlockedInWrite || !co.ClientTold {
		t.Errorf("complete: handler blocked %t, client told %t; want freed, told", co.HandlerBlockedInWrite, co.ClientTold)
	}
	if want := sc.StallTimeout.Seconds(); co.APFSeatSeconds != want {
		t.Errorf("complete seat-seconds %g, want %g (one seat until the stall)", co.APFSeatSeconds, want)
	}
	if len(res.Verdict.HeldByPR141899) != 1 || len(res.Verdict.ToldByComplete) != 1 {
		t.Errorf("verdict held %v, told %v; want slow-informer in both", res.Verdict.HeldByPR141899, res.Verdict.ToldByComplete)
	}
}
