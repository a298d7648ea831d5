package diagnosis

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/watch-doctor/watch-doctor/internal/watches"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

func heldHandler(id int64, wait int) watches.HeldHandler {
	return watches.HeldHandler{
		Handler:        api.Handler{GoroutineID: id, State: "select", WaitMinutes: wait, Block: api.HandlerClientNotReading, ConnGoroutineID: id - 200, ConnInDump: true},
		APFGoroutineID: id + 1,
	}
}

func TestJudgeHeld(t *testing.T) {
	at := t0.Add(10 * time.Minute)
	withHeld := func(s watches.Sample, hs ...watches.HeldHandler) watches.Sample {
		s.Dump.Held = hs
		return s
	}
	tests := []struct {
		name        string
		sample      watches.Sample
		want        []verdict
		wantSummary api.Summary
	}{
		{
			"held three minutes, alone: exact client",
			withHeld(sample(at, nil, watchRequest("slow-informer", at.Add(-200*time.Second))), heldHandler(700, 3)),
			[]verdict{{ID: 700, Type: api.HeldAfterWatcherClosed, Severity: api.SeverityCritical, User: "slow-informer", Match: api.MatchExact}},
			api.Summary{HeldAfterWatcherClosed: 1, Goroutines: 100},
		},
		{
			// Its request, past the stall bound, fails closed.
			"held under a minute: no held finding, its request undecided",
			withHeld(sample(at, nil, watchRequest("slow-informer", at.Add(-40*time.Second))), heldHandler(700, 0)),
			[]verdict{{Type: api.UndecidedInitialEvents, Severity: api.SeverityWarning, User: "slow-informer"}},
			api.Summary{UndecidedWatches: 1, Goroutines: 100},
		},
		{
			// The held handler (3 minutes) fits only the older request;
			// the stuck watcher (2 minutes) then gets the other.
			"held beside a stuck watcher: each gets its own request",
			withHeld(sample(at, []api.Watcher{initialWatcher(1000, 2)},
				watchRequest("old", at.Add(-210*time.Second)),
				watchRequest("newer", at.Add(-130*time.Second))), heldHandler(700, 3)),
			[]verdict{
				{ID: 700, Type: api.HeldAfterWatcherClosed, Severity: api.SeverityCritical, User: "old", Match: api.MatchExact},
				{ID: 1000, Type: api.StuckInitialEvents, Severity: api.SeverityCritical, User: "newer", Match: api.MatchExact},
			},
			api.Summary{StuckWatches: 1, StuckGoroutines: 3, StuckSeats: 1, HeldAfterWatcherClosed: 1, Goroutines: 100},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Diagnose([]watches.Server{{Name: "a", Samples: []watches.Sample{tt.sample}}}, Options{})
			if diff := cmp.Diff(tt.want, verdicts(r)); diff != "" {
				t.Errorf("verdicts (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantSummary, r.Summary); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
			for _, f := range r.Findings {
				if f.Type != api.HeldAfterWatcherClosed {
					continue
				}
				if f.Phase != api.PhaseClosed || !cmp.Equal(f.GoroutineIDs, []int64{700, 701}) {
					t.Errorf("held finding: phase %q, goroutines %v; want closed, [700 701]", f.Phase, f.GoroutineIDs)
				}
				if !strings.Contains(strings.Join(r.Advice, "\n"), "after their watcher was closed") {
					t.Errorf("advice lacks the held handlers:\n%s", strings.Join(r.Advice, "\n"))
				}
			}
		})
	}
}

// The advice counts only seats the evidence attributes and names the
// candidates of an ambiguous finding, never one of them alone.
func TestHeldAdvice(t *testing.T) {
	held := func(c *api.Client, cands ...api.Request) api.Finding {
		return api.Finding{Type: api.HeldAfterWatcherClosed, Client: c, Candidates: cands}
	}
	tests := []struct {
		name string
		fs   []api.Finding
		want []string
	}{
		{"exact", []api.Finding{held(&api.Client{User: "alice", Match: api.MatchExact, Seats: 2})},
			[]string{"1 watch handler(s) still hold 2 APF seat(s)", `restart or fix "alice", which`}},
		{"ambiguous, one level", []api.Finding{held(&api.Client{Match: api.MatchAmbiguous, Seats: 1, PriorityLevel: "global-default"}, api.Request{User: "b"}, api.Request{User: "a"})},
			[]string{"hold 1 APF seat(s)", `one of "b" | "a" (ambiguous: check each)`}},
		{"ambiguous, seats unknown", []api.Finding{held(&api.Client{Match: api.MatchAmbiguous}, api.Request{User: "a"}), held(nil)},
			[]string{"2 watch handler(s) still hold APF seats (0 known; 2 handler(s) of unknown seats)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := heldAdvice(&api.Report{Findings: tt.fs})
			if len(got) != 1 {
				t.Fatalf("advice = %q, want one line", got)
			}
			for _, w := range tt.want {
				if !strings.Contains(got[0], w) {
					t.Errorf("advice %q lacks %q", got[0], w)
				}
			}
		})
	}
	if got := heldAdvice(&api.Report{}); got != nil {
		t.Errorf("no held finding: advice = %q", got)
	}
}
