package diagnosis

import (
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
			out := decideAggregated("s", cur)
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
	if got := initializingLonger(rs, time.Time{}); got != nil {
		t.Errorf("without a capture time: %+v, want none", got)
	}
}
