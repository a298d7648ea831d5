package diagnosis

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/watches"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// A sample whose fetches reached different processes decides nothing:
// the watcher blocked two minutes, which one sample calls stuck and whose
// request the APF dump names (alice), is undecided with no client and no
// seats, and the report is incomplete; without Mixed it is stuck, alice's.
func TestDiagnoseMixedSampleDecidesNothing(t *testing.T) {
	t.Parallel()
	at := t0.Add(3 * time.Minute)
	for _, tc := range []struct {
		name, mixed string
		want        verdict
		incomplete  bool
	}{
		{"one process", "", verdict{ID: 1000, Type: api.StuckInitialEvents, Severity: api.SeverityCritical, User: "alice", Match: api.MatchExact}, false},
		{"mixed processes", "sample 1 reached different API server processes", verdict{ID: 1000, Type: api.UndecidedInitialEvents, Severity: api.SeverityWarning}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := sample(at, []api.Watcher{initialWatcher(1000, 2)}, watchRequest("alice", t0))
			s.Mixed = tc.mixed
			r := Diagnose([]watches.Server{{Name: "s", Samples: []watches.Sample{s}}}, Options{})
			if len(r.Findings) != 1 {
				t.Fatalf("%d findings, want 1: %+v", len(r.Findings), r.Findings)
			}
			f := r.Findings[0]
			got := verdict{ID: f.GoroutineIDs[0], Type: f.Type, Severity: f.Severity}
			if f.Client != nil {
				got.User, got.Match = f.Client.User, f.Client.Match
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("finding (-want +got):\n%s", diff)
			}
			if tc.mixed != "" && (f.UndecidedReason != api.UndecidedMixedProcesses || f.SeatsKnown()) {
				t.Errorf("reason %q, seats known %v; want MixedProcesses and no seats", f.UndecidedReason, f.SeatsKnown())
			}
			if inc := strings.Join(r.Incomplete, "\n"); tc.incomplete != strings.Contains(inc, tc.mixed+":") {
				t.Errorf("incomplete %q, want it to say why (%v)", r.Incomplete, tc.incomplete)
			}
		})
	}
}

func TestMixedSamples(t *testing.T) {
	t.Parallel()
	s := []watches.Sample{{}, {Mixed: "b"}, {}}
	for _, tc := range []struct {
		last, prev int
		want       string
	}{
		{2, 0, ""}, {1, 0, "b"}, {2, 1, "b"}, {2, -1, ""}, {-1, -1, ""},
	} {
		if got := mixedSamples(s, tc.last, tc.prev); got != tc.want {
			t.Errorf("mixedSamples(%d, %d) = %q, want %q", tc.last, tc.prev, got, tc.want)
		}
	}
}
