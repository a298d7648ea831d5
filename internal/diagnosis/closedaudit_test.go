package diagnosis

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/pkg/audit"
)

// TestEarlyEndsOf: only the watches of the resource that completed in the
// window in under half their timeoutSeconds count, per user and path,
// oldest first; the evidence says how long each lasted and the gaps.
func TestEarlyEndsOf(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	ev := func(user, path string, start, end time.Duration, timeout int) audit.Event {
		return audit.Event{Source: "audit.log", Line: 1, User: user, Verb: "watch", Path: path, RequestReceived: t0.Add(start), Completed: t0.Add(end), TimeoutSeconds: timeout}
	}
	events := []audit.Event{
		ev("slow", "/api/v1/namespaces/ns/configmaps", 40*time.Second, 60*time.Second, 600),
		ev("slow", "/api/v1/namespaces/ns/configmaps", 0, 20*time.Second, 600),
		ev("fast", "/api/v1/namespaces/ns/configmaps", 0, 500*time.Second, 600),       // ran most of its timeout
		ev("slow", "/api/v1/namespaces/ns/pods", 0, 10*time.Second, 600),              // another resource
		ev("late", "/api/v1/namespaces/ns/configmaps", 0, 2*time.Hour, 7200*4),        // completed after the window
		ev("untimed", "/api/v1/namespaces/ns/configmaps", 0, 10*time.Second, 0),       // no timeoutSeconds to compare
		{User: "open", Verb: "watch", Path: "/api/v1/configmaps", TimeoutSeconds: 60}, // never completed
	}
	got := earlyEndsOf(events, "/configmaps", t0, t0.Add(10*time.Minute))
	if len(got) != 1 {
		t.Fatalf("got %d users and paths, want 1: %+v", len(got), got)
	}
	if diff := cmp.Diff([]string{"slow", "/api/v1/namespaces/ns/configmaps"}, []string{got[0].user, got[0].path}); diff != "" {
		t.Errorf("key (-want +got):\n%s", diff)
	}
	if len(got[0].events) != 2 || !got[0].events[0].RequestReceived.Equal(t0) {
		t.Fatalf("events not the two early ends oldest first: %+v", got[0].events)
	}
	e := got[0].evidence()
	for _, want := range []string{"2 watch request(s)", "slow", "(600s)", "20s"} {
		if !strings.Contains(e, want) {
			t.Errorf("evidence %q lacks %q", e, want)
		}
	}
}
