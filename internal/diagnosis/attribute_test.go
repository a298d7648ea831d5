package diagnosis

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// The client of an ambiguous finding keeps only what every candidate
// shares, and no start time.
func TestCommonClient(t *testing.T) {
	a, b := watchRequest("alice", t0), watchRequest("bob", t0.Add(time.Minute))
	b.Path, b.Resource = "/api/v1/namespaces/ns/configmaps", "configmaps"
	b.InitialSeats = 2
	got := commonClient([]apf.Request{a, b})
	want := &api.Client{Verb: "watch", Namespace: "ns", APIVersion: "v1", PriorityLevel: "global-default", FlowSchema: "global-default", Match: api.MatchAmbiguous}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// A pair writes the request's client and its evidence; an ambiguous
// watcher gets its candidates.
func TestApplyMatches(t *testing.T) {
	at := t0.Add(10 * time.Minute)
	in := matchInput{watchers: []api.Watcher{initialWatcher(10, 5)}, reqs: []apf.Request{watchRequest("alice", t0)}, at: at, details: true}
	f := &api.Finding{Watcher: in.watchers[0], APIServer: "s"}
	applyMatches([]*api.Finding{f}, in, matchClients(in))
	start := t0
	want := &api.Finding{Watcher: in.watchers[0], APIServer: "s",
		Client: &api.Client{User: "alice", Verb: "watch", Path: "/api/v1/namespaces/ns/pods", Namespace: "ns", Resource: "pods", APIVersion: "v1",
			PriorityLevel: "global-default", FlowSchema: "global-default", Seats: 1, StartTime: &start, Match: api.MatchExact},
		Evidence: []string{"client match exact: the APF dump lists exactly one executing watch request", "request started 10m0s before the capture"}}
	if diff := cmp.Diff(want, f); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
