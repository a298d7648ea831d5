package metrics

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEveryNumberFromOutsideIsCheckedBeforeUse: NaN, infinities and
// negative values of /metrics are not measured, each said once with its
// reason, and never reach the model; a pause histogram whose sum is not a
// measurement gives no pause figure; a sum going down is an error.
func TestEveryNumberFromOutsideIsCheckedBeforeUse(t *testing.T) {
	text := `# TYPE go_goroutines gauge
go_goroutines NaN
# TYPE process_start_time_seconds gauge
process_start_time_seconds +Inf
# TYPE apiserver_watch_cache_events_dispatched_total counter
apiserver_watch_cache_events_dispatched_total{group="",resource="pods"} -5
apiserver_watch_cache_events_dispatched_total{group="",resource="nodes"} -7
# TYPE go_sched_pauses_total_other_seconds histogram
go_sched_pauses_total_other_seconds_bucket{le="1e-06"} 1
go_sched_pauses_total_other_seconds_bucket{le="+Inf"} 2
go_sched_pauses_total_other_seconds_sum NaN
go_sched_pauses_total_other_seconds_count 2
`
	s, err := Parse(strings.NewReader(text), "hostile/metrics")
	if err != nil {
		t.Fatal(err)
	}
	snap := Extract(s)
	if !math.IsNaN(snap.Goroutines) || !math.IsNaN(snap.ProcessStartTime) {
		t.Errorf("goroutines %v, process start %v: want both not measured (NaN)", snap.Goroutines, snap.ProcessStartTime)
	}
	for _, r := range snap.Resources {
		if !math.IsNaN(r.EventsDispatched) {
			t.Errorf("%s: events dispatched %v, want not measured", r.Key(), r.EventsDispatched)
		}
	}
	var got []string
	for _, u := range snap.Unknown {
		got = append(got, u.Name+": "+u.Reason)
	}
	want := []string{
		"apiserver_watch_cache_events_dispatched_total: value -5 is negative: not measured",
		"go_goroutines: value NaN: not measured",
		"process_start_time_seconds: value +Inf: not measured",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unknown (-want +got):\n%s", diff)
	}
	if _, ok, err := SchedPauses(s); ok || err == nil || !strings.Contains(err.Error(), "_sum: value NaN: not measured") {
		t.Errorf("SchedPauses: ok %v, err %v: want the NaN sum refused", ok, err)
	}
	if _, err := (Pauses{Count: 3, Sum: 0.1}).Since(Pauses{Count: 2, Sum: 0.2}); err == nil || !strings.Contains(err.Error(), "sum went down") {
		t.Errorf("Since with a sum going down: %v, want an error", err)
	}
}
