package metrics

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// TestDocument: absent values (NaN) and infinities are null, a server
// without a sample carries why, and a resource absent from the first
// sample has every rate null.
func TestDocument(t *testing.T) {
	nan := math.NaN()
	at := time.Date(2026, 11, 29, 10, 24, 32, 0, time.FixedZone("CET", 3600))
	pods := Resource{Resource: "pods", Watchers: 3, InitEvents: nan, TerminatedWatchers: math.Inf(1), EventsDispatched: 4,
		CacheCapacity: nan, RegisteredWatchers: nan, EventsReceived: nan, CacheInitializations: nan, CacheResourceVersion: nan,
		WatchEvents: nan, WatchEventBytes: nan, WatchLists: nan, WatchListSeconds: nan}
	second := &Snapshot{Source: "b/metrics.txt", CapturedAt: at, Goroutines: 10, ResidentMemoryBytes: nan, ProcessStartTime: nan,
		Version: VersionInfo{Release: Release{1, 37}, From: "assumed"}, Resources: []Resource{pods},
		PriorityLevels: []PriorityLevel{{Name: "global-default", ExecutingSeats: 2, LimitSeats: nan, ExecutingRequests: 2}},
		Notes:          []string{"snapshot note"}}
	r := Report{APIServers: []APIServer{
		{Name: "a", Err: errors.New("refused")},
		{Name: "b", Snapshot: second, Rates: &RateSnapshot{First: &Snapshot{CapturedAt: at.Add(-time.Minute)}, Second: second, Interval: time.Minute, Notes: []string{"rates note"}}},
		{Name: "c"},
	}}
	doc := r.Document()
	if doc.APIVersion != api.GroupVersion || doc.Kind != api.KindWatchMetrics {
		t.Errorf("document %q %q", doc.APIVersion, doc.Kind)
	}
	null := (*float64)(nil)
	want := []api.APIServerMetrics{
		{Name: "a", Error: "refused"},
		{
			Name: "b", Source: "b/metrics.txt", CapturedAt: "2026-11-29T09:24:32Z",
			Version:    &api.MetricsVersion{Release: "v1.37", From: "assumed"},
			Goroutines: ref(float64(10)), ResidentMemoryBytes: null,
			Sampling: &api.MetricsSampling{FirstCapturedAt: "2026-11-29T09:23:32Z", IntervalSeconds: 60},
			Resources: []api.ResourceMetrics{{Resource: "pods", Watchers: ref(float64(3)), EventsDispatched: ref(float64(4)),
				ResourceRates: &api.ResourceRates{}}},
			PriorityLevels: []api.PriorityLevelMetrics{{Name: "global-default", ExecutingSeats: ref(float64(2)), ExecutingRequests: ref(float64(2))}},
			Missing:        []api.MissingMetric{},
			Notes:          []string{"snapshot note", "rates note"},
		},
		{Name: "c", Error: "no sample"},
	}
	if diff := cmp.Diff(want, doc.APIServers); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
}
