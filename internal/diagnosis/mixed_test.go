package diagnosis

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/watches"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
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

// Without a goroutine dump (profiling off) a mixed sample's APF dumps
// decide nothing either: alice's watch, initializing 3 minutes and
// executing in both samples while no watch event was written, which one
// process's samples call stuck, is undecided with no client and no
// seats; the young one is not listed; the report is incomplete.
func TestDiagnoseMixedAPFOnlyDecidesNothing(t *testing.T) {
	t.Parallel()
	apfOnly := func(at time.Time, mixed string) watches.Sample {
		s := sample(at, nil, watchRequest("alice", t0), watchRequest("bob", at.Add(-5*time.Second)))
		s.Dump, s.Mixed = nil, mixed
		return s
	}
	for _, tc := range []struct {
		name, mixed string
		want        []verdict
	}{
		{"one process", "", []verdict{{Type: api.UndecidedInitialEvents, Severity: api.SeverityWarning, User: "alice"}}},
		{"mixed processes", "sample 2 reached different API server processes", []verdict{{Type: api.UndecidedInitialEvents, Severity: api.SeverityWarning}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := watches.Server{Name: "s", Samples: []watches.Sample{apfOnly(t0.Add(time.Minute), ""), apfOnly(t0.Add(3*time.Minute), tc.mixed)}}
			r := Diagnose([]watches.Server{s}, Options{})
			var got []verdict
			for _, f := range r.Findings {
				v := verdict{Type: f.Type, Severity: f.Severity}
				if f.Client != nil {
					v.User, v.Match = f.Client.User, f.Client.Match
				}
				got = append(got, v)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			if tc.mixed == "" {
				return
			}
			f := r.Findings[0]
			if f.UndecidedReason != api.UndecidedMixedProcesses || f.SeatsKnown() || r.Summary.StuckSeats != 0 {
				t.Errorf("reason %q, seats known %v, stuck seats %d; want MixedProcesses and no seats", f.UndecidedReason, f.SeatsKnown(), r.Summary.StuckSeats)
			}
			if want := `an APF dump_requests read through the load balancer lists a watch of "pods" initializing for 3m0s, of whichever API server process answered it`; len(f.Evidence) == 0 || f.Evidence[0] != want {
				t.Errorf("evidence %q\nwant first %q", f.Evidence, want)
			}
			if inc := strings.Join(r.Incomplete, "\n"); !strings.Contains(inc, "s: "+tc.mixed+": ") || !strings.Contains(inc, "no client named") {
				t.Errorf("incomplete %q, want it to say why", r.Incomplete)
			}
		})
	}
}

func TestResourceOrUnknown(t *testing.T) {
	t.Parallel()
	if got := resourceOrUnknown(apf.Request{Resource: "pods"}); got != `"pods"` {
		t.Errorf("got %s", got)
	}
	if got := resourceOrUnknown(apf.Request{}); got != "an unknown resource" {
		t.Errorf("got %s", got)
	}
}
