package v1alpha1

import "testing"

// TestWatchMetricsJSON: an absent value is null, never 0 or left out, and
// the rates sit inline in the resource when sampled twice.
func TestWatchMetricsJSON(t *testing.T) {
	three := 3.0
	roundTrip(t, PriorityLevelMetrics{Name: "global-default", ExecutingSeats: &three},
		`{"name":"global-default","executingSeats":3,"limitSeats":null,"executingRequests":null}`)
	roundTrip(t, ResourceMetrics{Resource: "pods", Watchers: &three},
		`{"group":"","resource":"pods","watchers":3,"initEvents":null,"terminatedWatchers":null,"eventsDispatched":null,"cacheCapacity":null,"eventsReceived":null,"cacheInitializations":null,"cacheResourceVersion":null,"watchEvents":null,"watchEventBytes":null,"watchLists":null,"watchListSeconds":null}`)
	rm := ResourceMetrics{Resource: "pods", ResourceRates: &ResourceRates{WatchersChange: &three}}
	roundTrip(t, rm, `{"group":"","resource":"pods","watchers":null,"initEvents":null,"terminatedWatchers":null,"eventsDispatched":null,"cacheCapacity":null,"eventsReceived":null,"cacheInitializations":null,"cacheResourceVersion":null,"watchEvents":null,"watchEventBytes":null,"watchLists":null,"watchListSeconds":null,"watchersChange":3,"initEventsPerSecond":null,"terminatedWatchersPerSecond":null,"eventsDispatchedPerSecond":null,"eventsReceivedPerSecond":null,"cacheInitializationsPerSecond":null,"watchEventsPerSecond":null,"watchEventBytesPerSecond":null,"watchListsPerSecond":null}`)
	roundTrip(t, APIServerMetrics{Name: "a", Error: "refused"},
		`{"name":"a","error":"refused","goroutines":null,"residentMemoryBytes":null,"resources":null,"priorityLevels":null,"missing":null}`)
}
