package metrics

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestBlindSpots: the watch cache blind spots are said when a cached
// resource has watchers, the APF one when some level has executing seats.
func TestBlindSpots(t *testing.T) {
	nan := math.NaN()
	cached := Resource{Resource: "pods", Watchers: 2, InitEvents: 0, TerminatedWatchers: nan, EventsReceived: nan, EventsDispatched: nan, CacheInitializations: nan, CacheCapacity: nan, CacheResourceVersion: nan}
	uncached := Resource{Resource: "events", Watchers: 2, InitEvents: nan, TerminatedWatchers: nan, EventsReceived: nan, EventsDispatched: nan, CacheInitializations: nan, CacheCapacity: nan, CacheResourceVersion: nan}
	idle := cached
	idle.Watchers = 0
	for _, tc := range []struct {
		name string
		s    Snapshot
		want []MetricID
	}{
		{"nothing", Snapshot{}, nil},
		{"cached watchers", Snapshot{Resources: []Resource{uncached, cached}}, []MetricID{InitEvents, TerminatedWatchers}},
		{"watchers not cached", Snapshot{Resources: []Resource{uncached}}, nil},
		{"cached, no watchers", Snapshot{Resources: []Resource{idle}}, nil},
		{"seats", Snapshot{PriorityLevels: []PriorityLevel{{Name: "a"}, {Name: "b", ExecutingSeats: 1}, {Name: "c", ExecutingSeats: 2}}}, []MetricID{ExecutingSeats}},
		{"both", Snapshot{Resources: []Resource{cached}, PriorityLevels: []PriorityLevel{{ExecutingSeats: 1}}}, []MetricID{InitEvents, TerminatedWatchers, ExecutingSeats}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []MetricID
			for _, b := range blindSpots(&tc.s) {
				if b.Text == "" || b.Source == "" {
					t.Errorf("%s: a blind spot without its text or source: %+v", b.Metric, b)
				}
				got = append(got, b.Metric)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("blind spots (-want +got):\n%s", diff)
			}
		})
	}
}
