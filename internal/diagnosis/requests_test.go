package diagnosis

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/watch-doctor/watch-doctor/internal/watches"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

func TestSeatsPerPriorityLevelAgainstLimit(t *testing.T) {
	at := t0.Add(10 * time.Minute)
	s := sample(at, []api.Watcher{initialWatcher(1000, 3)}, watchRequest("alice", t0))
	s.Requests.Requests[0].InitialSeats = 8
	exec, limit := 9.0, 49.0
	s.Metrics = &watches.MetricsContext{Levels: map[string]watches.LevelSeats{"global-default": {Executing: &exec, Limit: &limit}}}
	s.Levels = []apf.PriorityLevel{{Name: "global-default", ExecutingRequests: 2}}
	r := Diagnose([]watches.Server{{Name: "s", Samples: []watches.Sample{s}}}, Options{})
	two := 2
	want := []api.PriorityLevel{{APIServer: "s", Name: "global-default", StuckSeats: 8, ExecutingSeats: &exec, LimitSeats: &limit, ExecutingRequests: &two}}
	if diff := cmp.Diff(want, r.PriorityLevels); diff != "" {
		t.Errorf("priority levels (-want +got):\n%s", diff)
	}
	if r.Summary.StuckSeats != 8 || r.Summary.StuckGoroutines != 3 {
		t.Errorf("summary = %+v", r.Summary)
	}
}
