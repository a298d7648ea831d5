package diagnosis

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/watch-doctor/watch-doctor/internal/watches"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// The cheap look decides what it can: nothing sending is nothing stuck;
// requests initializing past StallBound are undecided suspects; the rest
// stays incomplete.
func TestDecideAggregated(t *testing.T) {
	at := t0.Add(10 * time.Minute)
	sending := []api.PhaseCount{{Phase: api.PhaseInitial, InSend: true, Count: 2}}
	old, fresh := watchRequest("old", at.Add(-StallBound-time.Second)), watchRequest("fresh", at.Add(-StallBound))
	tests := []struct {
		name                     string
		counts                   []api.PhaseCount
		rs                       *apf.Requests
		at                       time.Time
		notes, incomplete, users []string
	}{
		{"none sending", []api.PhaseCount{{Phase: api.PhaseInitial, Count: 3}}, nil, at,
			[]string{"decided without a debug=2 dump: the debug=1 profile shows no watcher blocked sending an event, so none is stuck"}, nil, nil},
		{"sending, none past the bound", sending, &apf.Requests{HasDetails: true, Requests: []apf.Request{fresh}}, at,
			[]string{"decided without a debug=2 dump: 1 watch requests are initializing (APF dump_requests), none for longer than 30s, so none is stuck past that bound"}, nil, nil},
		{"sending, one past the bound", sending, &apf.Requests{HasDetails: true, Requests: []apf.Request{fresh, old}}, at,
			nil, []string{"s: 1 watch requests initializing for longer than 30s: stuck or slow: not decided without a goroutine dump; withheld"}, []string{"old"}},
		{"sending, no capture time", sending, &apf.Requests{HasDetails: true, Requests: []apf.Request{old}}, time.Time{},
			nil, []string{"s: 2 watchers are replaying initial events in the debug=1 profile: stuck or slow: not decided without a goroutine dump (or APF dump_requests with a capture time); withheld"}, nil},
		{"streaming sending", []api.PhaseCount{{Phase: api.PhaseStreaming, InSend: true, Count: 1}}, nil, at,
			nil, []string{"s: 1 streaming watchers are sending events in the debug=1 profile: blocked or not is not decided without a goroutine dump; withheld"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cur := watches.Sample{CapturedAt: tt.at, Requests: tt.rs, Withheld: "withheld", Dump: &watches.Dump{Format: watches.FormatDebug1, PhaseCounts: tt.counts}}
			out := decideAggregated("s", "", cur)
			var users []string
			for _, f := range out.findings {
				if f.Type != api.UndecidedInitialEvents || !strings.HasSuffix(f.Message, "stuck or slow: not decided without a goroutine dump; withheld") {
					t.Errorf("finding %s: %q", f.Type, f.Message)
				}
				users = append(users, f.Client.User)
			}
			if diff := cmp.Diff(tt.notes, out.notes); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.incomplete, out.incomplete); diff != "" {
				t.Errorf("incomplete (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.users, users); diff != "" {
				t.Errorf("suspects (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInitializingLonger(t *testing.T) {
	at := t0.Add(time.Hour)
	rs := []apf.Request{watchRequest("at-bound", at.Add(-StallBound)), watchRequest("past", at.Add(-StallBound-time.Millisecond))}
	if got := initializingLonger(rs, at); len(got) != 1 || got[0].User != "past" {
		t.Errorf("initializingLonger = %+v, want only the request past the bound", got)
	}
	// Fail closed (PastStallBound): without a capture time no age can
	// clear a request, so every one is a suspect.
	if got := initializingLonger(rs, time.Time{}); len(got) != 2 {
		t.Errorf("without a capture time: %+v, want both", got)
	}
}

// The findings of a partial dump's shared candidates list them when there
// are at most maxCandidatesListed, and say how many otherwise: n findings
// sharing n requests cost O(n) lines, not O(n^2) (2,000 of them listed
// 4,000,000 candidates before).
func TestSharedSuspectsAreLinear(t *testing.T) {
	at := t0.Add(10 * time.Minute)
	for _, n := range []int{3, 2000} {
		reqs := make([]apf.Request, n)
		for i := range reqs {
			reqs[i] = watchRequest(fmt.Sprintf("u%d", i), t0)
		}
		res := matchResult{used: make([]bool, n)}
		for i := range res.used {
			res.used[i] = true
		}
		out := sharedSuspects("s", reqs, res, n, at)
		if len(out) != n {
			t.Fatalf("%d requests: %d findings, want %d", n, len(out), n)
		}
		wantCands, wantLines := n, n
		if n > maxCandidatesListed {
			wantCands, wantLines = 0, 1
		}
		for _, f := range out {
			if len(f.Candidates) != wantCands || len(f.Evidence) != wantLines || f.Client == nil || f.Client.Resource != "pods" {
				t.Fatalf("%d requests: a finding lists %d candidates, %d evidence lines (%q), client %+v; want %d and %d", n, len(f.Candidates), len(f.Evidence), f.Evidence, f.Client, wantCands, wantLines)
			}
		}
		if n > maxCandidatesListed && out[0].Evidence[0] != fmt.Sprintf("%d candidates, too many to list", n) {
			t.Errorf("evidence %q", out[0].Evidence)
		}
	}
}

// TestPartialSuspects: of a partial dump's APF rows, the requests no
// covered watcher claims become undecided findings when they initialize
// longer than StallBound; the candidates of covered ambiguous watchers
// beyond what those watchers can own become one undecided finding each
// extra request, listing them all (sharedSuspects).
func TestPartialSuspects(t *testing.T) {
	rq := func(user string, age time.Duration) apf.Request {
		return apf.Request{User: user, Verb: "watch", Path: "/api/v1/pods", Resource: "pods", PriorityLevel: "workload-low", FlowSchema: "service-accounts", FinalSeats: 1, StartTime: t0.Add(-age)}
	}
	reqs := []apf.Request{rq("alice", 10*time.Minute), rq("bob", 5*time.Minute), rq("carol", 4*time.Minute), rq("dave", 2*time.Minute), rq("erin", 10*time.Second), rq("fred", 3*time.Minute)}
	type got struct {
		User       string
		Candidates []string
		Why        string
	}
	summary := func(fs []*api.Finding) []got {
		var out []got
		for _, f := range fs {
			if f.Type != api.UndecidedInitialEvents || f.Severity != api.SeverityWarning {
				t.Errorf("finding %+v: want an UndecidedInitialEvents warning", f)
			}
			g := got{Why: f.Message[strings.LastIndex(f.Message, ": ")+2:]}
			if f.Client != nil {
				g.User = f.Client.User
			}
			for _, c := range f.Candidates {
				g.Candidates = append(g.Candidates, c.User)
			}
			out = append(out, g)
		}
		return out
	}
	const open = "not decided"
	for _, tc := range []struct {
		name string
		res  matchResult
		want []got
	}{{
		name: "every request claimed",
		res:  matchResult{pairs: []pairing{{req: 0, conf: api.MatchExact}, {req: 1, conf: api.MatchExact}, {req: 2, conf: api.MatchExact}, {req: 3, conf: api.MatchExact}, {req: 4, conf: api.MatchExact}, {req: 5, conf: api.MatchExact}}, used: []bool{true, true, true, true, true, true}},
	}, {
		name: "open requests: the old ones are suspects, the young one is not",
		res:  matchResult{pairs: []pairing{{req: 0, conf: api.MatchExact}}, used: []bool{true, false, false, false, false, false}},
		want: []got{{User: "bob", Why: open}, {User: "carol", Why: open}, {User: "dave", Why: open}, {User: "fred", Why: open}},
	}, {
		name: "one ambiguous watcher among three candidates: two extra requests are shared suspects",
		res: matchResult{
			pairs: []pairing{{req: 0, conf: api.MatchExact}, {req: -1, conf: api.MatchAmbiguous, candidates: []int{1, 2, 5}, nCand: 3}},
			used:  []bool{true, true, true, false, false, true},
		},
		want: []got{
			{Candidates: []string{"bob", "carol", "fred"}, Why: open},
			{Candidates: []string{"bob", "carol", "fred"}, Why: open},
			{User: "dave", Why: open},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			c := dumpCase{server: "srv", cur: watches.Sample{CapturedAt: t0}, partial: true}
			if diff := cmp.Diff(tc.want, summary(c.partialSuspects(reqs, tc.res))); diff != "" {
				t.Errorf("partialSuspects (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSharedSuspectsMessage: the shared suspects' finding says how many of
// how many requests are the missing watchers', and lists the candidates
// initializing longer than StallBound, oldest first.
func TestSharedSuspectsMessage(t *testing.T) {
	reqs := []apf.Request{
		{User: "young", StartTime: t0.Add(-5 * time.Second)},
		{User: "new", StartTime: t0.Add(-time.Minute)},
		{User: "old", StartTime: t0.Add(-time.Hour)},
	}
	res := matchResult{pairs: []pairing{{req: -1, conf: api.MatchAmbiguous, nCand: 3}}, used: []bool{true, true, true}}
	fs := sharedSuspects("srv", reqs, res, 2, t0)
	if len(fs) != 2 {
		t.Fatalf("got %d findings, want 2 (one per extra request)", len(fs))
	}
	var users []string
	for _, c := range fs[0].Candidates {
		users = append(users, c.User)
	}
	if diff := cmp.Diff([]string{"old", "new"}, users); diff != "" {
		t.Errorf("candidates (-want +got):\n%s", diff)
	}
	if want := "2 of these 2 requests, candidates of watchers in the covered part, belong to watchers in the missing part"; !strings.Contains(fs[0].Message, want) {
		t.Errorf("message %q does not say %q", fs[0].Message, want)
	}
	if got := sharedSuspects("srv", reqs[:1], matchResult{used: []bool{true}}, 1, t0); got != nil {
		t.Errorf("no candidate initializing longer than StallBound: got %d findings, want none", len(got))
	}
}
