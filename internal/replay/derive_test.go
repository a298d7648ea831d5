package replay

import (
	"strconv"
	"strings"
	"testing"
	"time"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/metrics"
)

// A bundle of a huge cluster (issue 13, defect 9: 5M pods derived a
// 1388-hour scenario that even --print-scenario refused) gives a scenario
// of bounded length: the slow client reads faster instead.
func TestDeriveBoundsTheDuration(t *testing.T) {
	for _, tt := range []struct {
		pods      int
		wantModel string
	}{
		{2000, "paced 1/s"},
		{5_000_000, "paced 707/s"},
	} {
		text := "# TYPE apiserver_resource_objects gauge\napiserver_resource_objects{group=\"\",resource=\"pods\"} " + strconv.Itoa(tt.pods) + "\n"
		s, err := metrics.Parse(strings.NewReader(text), "metrics.txt")
		if err != nil {
			t.Fatal(err)
		}
		r := &api.Report{Findings: []api.Finding{{
			Type:   api.SlowInitialEvents,
			Client: &api.Client{User: "reader", Resource: "pods", Namespace: "big", Seats: 1},
		}}}
		sc, err := Derive(Evidence{Name: "big", Metrics: s, Report: r})
		if err != nil {
			t.Fatalf("%d pods: %v", tt.pods, err)
		}
		if got := sc.Clients[0].Model; got != tt.wantModel {
			t.Errorf("%d pods: model %q, want %q", tt.pods, got, tt.wantModel)
		}
		if d := sc.Duration.Duration; d > maxDerivedDuration+2*time.Minute {
			t.Errorf("%d pods: duration %v, over %v", tt.pods, d, maxDerivedDuration)
		}
	}
}
