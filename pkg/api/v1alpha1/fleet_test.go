package v1alpha1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNewFleetReport(t *testing.T) {
	fr := NewFleetReport([]ClusterReport{
		{Context: "prod", Report: &Report{Summary: Summary{StuckWatches: 2, SlowWatches: 1, StuckSeats: 2}}},
		{Context: "dev", Report: &Report{Summary: Summary{StuckWatches: 1, StuckSeats: 3}}, Error: "one instance refused"},
		{Context: "lab", Error: "unreachable"},
	})
	if fr.APIVersion != GroupVersion || fr.Kind != KindFleetReport || len(fr.Clusters) != 3 {
		t.Errorf("report %q %q with %d clusters", fr.APIVersion, fr.Kind, len(fr.Clusters))
	}
	want := FleetSummary{Clusters: 3, Failed: 2, StuckWatches: 3, SlowWatches: 1, StuckSeats: 5}
	if diff := cmp.Diff(want, fr.Summary); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	roundTrip(t, FleetSummary{Clusters: 1, Failed: 1}, `{"clusters":1,"failed":1,"stuckWatches":0,"slowWatches":0,"stuckSeats":0}`)
}
