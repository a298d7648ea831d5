package v1alpha1

import "testing"

func TestReplayJSON(t *testing.T) {
	five := 5.0
	roundTrip(t, ClientResult{Name: "stuck", Model: "stops-after 1", Scope: "ns", Outcome: OutcomeBlocked, StoppedAfterSeconds: &five, EventsReceived: 1},
		`{"name":"stuck","model":"stops-after 1","scope":"ns","outcome":"blocked","stoppedAfterSeconds":5,"eventsReceived":1,"bookmarksReceived":0,`+
			`"initialEvents":0,"startSeconds":0,"windowUpdates":0,"apfSeatSeconds":0,"handlerBlockedInWrite":false,"clientTold":false}`)
}

func TestOutcomesAreDistinct(t *testing.T) {
	seen := map[Outcome]bool{}
	for _, o := range []Outcome{OutcomeCompleted, OutcomeStopped, OutcomeBlocked, OutcomeDisconnected} {
		if o == "" || seen[o] {
			t.Errorf("outcome %q empty or repeated", o)
		}
		seen[o] = true
	}
}
