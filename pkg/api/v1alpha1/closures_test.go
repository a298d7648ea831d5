package v1alpha1

import "testing"

// TestClosuresJSON: a WatchClosedByServer finding's counts keep their
// field names; caughtUp is absent when the evidence cannot tell, and
// false when it says the client never caught up.
func TestClosuresJSON(t *testing.T) {
	never := false
	roundTrip(t, Closures{Resource: "configmaps", WindowSeconds: 70, Closed: 3, Returns: 2},
		`{"resource":"configmaps","windowSeconds":70,"closed":3,"returns":2}`)
	roundTrip(t, Closures{Group: "apps", Resource: "deployments", WindowSeconds: 70, Closed: 2, Reasons: map[string]int{"slow": 2}, Returns: 1,
		ReplaySeats: 8, ReplayObjects: 250, ReplayBytes: 5 << 20, CaughtUp: &never},
		`{"group":"apps","resource":"deployments","windowSeconds":70,"closed":2,"reasons":{"slow":2},"returns":1,"replaySeats":8,"replayObjects":250,"replayBytes":5242880,"caughtUp":false}`)
}
