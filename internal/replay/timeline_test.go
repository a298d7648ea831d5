package replay

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// TestTimelineSteps pins the slow informer's state over time in the seed
// reproduction: what each column frees at the stall, and when.
func TestTimelineSteps(t *testing.T) {
	sc, err := Builtin("issue-131721")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), sc, DefaultBackends(sc, nil), Options{Timeline: true})
	if err != nil {
		t.Fatal(err)
	}
	held := api.TimelineStep{Watcher: true, HandlerBlockedInWrite: true, Seats: 1}
	want := map[string][]api.TimelineStep{
		api.ColumnUnpatched: {held},
		api.ColumnPR141899:  {held, {AtSeconds: 30, HandlerBlockedInWrite: true, Seats: 1}},
		api.ColumnComplete:  {held, {AtSeconds: 30, Told: true}},
	}
	for _, s := range res.Timeline.Series {
		if len(s.Clients) != 3 || s.Clients[0].Name != "slow-informer" {
			t.Fatalf("%s: clients %+v, want slow-informer first of 3", s.Column, s.Clients)
		}
		if diff := cmp.Diff(want[s.Column], s.Clients[0].Steps); diff != "" {
			t.Errorf("%s: slow-informer's steps (-want +got):\n%s", s.Column, diff)
		}
		// The healthy client asks for no initial events: no seat held.
		for _, st := range s.Clients[2].Steps {
			if st.Seats != 0 {
				t.Errorf("%s: healthy-client holds %g seats at %gs", s.Column, st.Seats, st.AtSeconds)
			}
		}
	}
}
