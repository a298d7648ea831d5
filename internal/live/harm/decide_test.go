package harm

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	"github.com/watch-doctor/watch-doctor/internal/watches"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
)

// t2Look is the cheap look of t2 at at: its debug=1 profile (2,223
// goroutines, two initial-phase watches blocked sending, started at
// 10:22:03) and its APF dump.
func t2Look(t *testing.T, at time.Time) CheapLook {
	t.Helper()
	profile, d, err := watches.ReadProfile(golden.Open(t, "t2", "goroutine-debug1.txt"), watches.FormatDebug1)
	if err != nil {
		t.Fatal(err)
	}
	requests, err := apf.ParseRequests(golden.Open(t, "t2", "apf-requests.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return CheapLook{Goroutines: float64(profile.Total), Start: math.NaN(), Requests: requests, Profile: profile, Phases: d.PhaseCounts, At: at}
}

// TestDecideDump: each way DecideDump decides, in the order it asks: the
// force, the run's policy, --max-goroutines, the cheap look's answer,
// then the estimated pause against the budget.
func TestDecideDump(t *testing.T) {
	t.Parallel()
	stuck := t2Look(t, time.Date(2026, 11, 29, 10, 22, 50, 0, time.UTC)) // 47 s into the replay
	young := t2Look(t, time.Date(2026, 11, 29, 10, 22, 23, 0, time.UTC)) // 20 s
	blind := CheapLook{Goroutines: math.NaN(), Start: math.NaN()}
	counted := CheapLook{Goroutines: 2000, Start: math.NaN()}
	fromProfile := estimateFromProfile(stuck.Profile)
	fromCount := estimateFromGoroutines(2000)
	const youngAnswer = "2 watch requests initializing (APF dump_requests), none for longer than 30s"
	trace := model.TraceConfig{Evidence: model.EvidenceTrace}
	for _, tc := range []struct {
		name     string
		cfg      model.Config
		look     CheapLook
		take     bool
		why      string
		withheld *model.PauseBudgetError
		limit    *model.GoroutineLimitError
	}{
		{name: "forced", cfg: model.Config{Force: true, MaxPause: time.Millisecond, Trace: trace}, look: stuck, take: true, why: "forced"},
		{name: "the policy refuses, the look does not answer", cfg: model.Config{Trace: trace}, look: stuck,
			withheld: &model.PauseBudgetError{Instance: "api", Estimate: fromProfile, Refused: "the evidence chosen is an execution trace"}},
		{name: "the policy refuses, the look answers", cfg: model.Config{Trace: trace}, look: young, why: youngAnswer},
		{name: "over --max-goroutines", cfg: model.Config{MaxGoroutines: 1000}, look: stuck,
			limit: &model.GoroutineLimitError{Instance: "api", Goroutines: 2223, Limit: 1000}},
		{name: "go_goroutines unknown under a limit", cfg: model.Config{MaxGoroutines: 1000}, look: blind,
			limit: &model.GoroutineLimitError{Instance: "api", Goroutines: math.NaN(), Limit: 1000}},
		{name: "the look answers", cfg: model.Config{MaxPause: time.Second}, look: young, why: youngAnswer},
		{name: "over the budget", cfg: model.Config{MaxPause: 10 * time.Millisecond}, look: stuck,
			withheld: &model.PauseBudgetError{Instance: "api", Estimate: fromProfile, Budget: 10 * time.Millisecond}},
		{name: "within the budget", cfg: model.Config{MaxPause: time.Second}, look: stuck, take: true,
			why: "estimated pause " + model.RoundPause(fromProfile.Pause).String() + " from the debug=1 profile: 2223 goroutines, 10868 frames"},
		{name: "no estimate under a budget", cfg: model.Config{MaxPause: time.Second}, look: blind,
			withheld: &model.PauseBudgetError{Instance: "api", Budget: time.Second}},
		{name: "no estimate, no budget", look: blind, take: true, why: "no pause budget"},
		{name: "from go_goroutines", cfg: model.Config{MaxPause: time.Minute}, look: counted, take: true,
			why: "estimated pause " + model.RoundPause(fromCount.Pause).String() + " from go_goroutines 2000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			take, why, withheld, err := DecideDump(tc.cfg, "api", tc.look)
			if take != tc.take || why != tc.why {
				t.Errorf("take %v, why %q; want %v, %q", take, why, tc.take, tc.why)
			}
			if diff := cmp.Diff(tc.withheld, withheld); diff != "" {
				t.Errorf("withheld (-want +got):\n%s", diff)
			}
			var limit *model.GoroutineLimitError
			if err != nil {
				limit, _ = err.(*model.GoroutineLimitError)
				if limit == nil {
					t.Fatalf("err %v, want a *GoroutineLimitError or none", err)
				}
			}
			if diff := cmp.Diff(tc.limit, limit, cmp.Comparer(func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) })); diff != "" {
				t.Errorf("limit (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEstimateOf: the profile when read, else go_goroutines, else none.
func TestEstimateOf(t *testing.T) {
	t.Parallel()
	look := t2Look(t, time.Time{})
	if got, want := EstimateOf(look), estimateFromProfile(look.Profile); got != want {
		t.Errorf("from the profile: %+v, want %+v", got, want)
	}
	look.Profile = nil
	if got := EstimateOf(look); got.Basis != "go_goroutines 2223" || got.Bytes != 2223*dumpBytesPerGoroutine {
		t.Errorf("from go_goroutines: %+v", got)
	}
	for _, n := range []float64{math.NaN(), -1} {
		if got := EstimateOf(CheapLook{Goroutines: n}); got.Known() {
			t.Errorf("go_goroutines %v: %+v, want no estimate", n, got)
		}
	}
}

// TestPauseOf: one walk per try of runtime.Stack, whose buffer doubles
// from 1 MiB to 64 MiB.
func TestPauseOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		bytes int64
		tries int64
	}{{1 << 20, 1}, {1<<20 + 1, 2}, {3 << 20, 3}, {64 << 20, 7}, {1 << 30, 7}} {
		if got, want := pauseOf(tc.bytes), time.Duration(tc.bytes*tc.tries)*dumpPausePerBytePerTry; got != want {
			t.Errorf("pauseOf(%d) = %v, want %v (%d tries)", tc.bytes, got, want, tc.tries)
		}
	}
}
