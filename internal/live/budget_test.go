package live

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
)

// TestCheapLookFirst: the debug=2 dump is taken only when the cheap look
// cannot answer alone, and within the pause budget (issue 10 items 2, 3).
func TestCheapLookFirst(t *testing.T) {
	t.Parallel()
	// The two initial-phase watches of t2 started at 10:22:03.
	young := fakeapiserver.CopyCapture(t, golden.Fixture("t2"), "2026-11-29T10:22:23Z")
	tests := []struct {
		name         string
		capture      string
		maxPause     time.Duration
		force        bool
		wantDump     bool
		wantWithheld string
		wantNote     string
	}{
		{name: "nothing initializing longer than the bound: no dump", capture: young, maxPause: time.Second, wantNote: "no goroutine dump needed: 2 watch requests initializing (APF dump_requests), none for longer than 30s"},
		{name: "suspects within the budget: dump", capture: golden.Fixture("t2"), maxPause: time.Second, wantDump: true},
		// t2's debug=1 profile: 2223 goroutines, 10868 frames: about 2.2 MB
		// and 91 ms.
		{name: "suspects over the budget: no dump", capture: golden.Fixture("t2"), maxPause: 10 * time.Millisecond, wantWithheld: "a dump would stop this server for about 91ms"},
		{name: "forced over the budget", capture: golden.Fixture("t2"), maxPause: time.Millisecond, force: true, wantDump: true},
		{name: "forced with nothing initializing", capture: young, maxPause: time.Second, force: true, wantDump: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := fakeapiserver.Start(t, tc.capture)
			clk := testingclock.NewFakeClock(time.Now())
			cfg := model.Config{REST: fakeapiserver.RESTConfig(t, s, fakeapiserver.TokenAdmin), APIServers: []string{s.Address()}, Samples: 1, RequestTimeout: 10 * time.Second, Clock: clk, MaxPause: tc.maxPause, Force: tc.force}
			res, err := Run(context.Background(), cfg, NewCaptures())
			if err != nil {
				t.Fatal(err)
			}
			ir := res.Instances[0]
			if len(ir.Errors) != 0 {
				t.Errorf("errors: %v", ir.Errors)
			}
			if got := tookDump(s); got != tc.wantDump {
				t.Errorf("debug=2 dump taken = %v, want %v (requests %q)", got, tc.wantDump, s.Requests())
			}
			sm := ir.Samples[0]
			if sm.Withheld != tc.wantWithheld {
				t.Errorf("Withheld = %q, want %q", sm.Withheld, tc.wantWithheld)
			}
			if (len(ir.Withheld) > 0) != (tc.wantWithheld != "") {
				t.Errorf("InstanceResult.Withheld = %v", ir.Withheld)
			}
			if tc.wantNote != "" && (len(sm.Notes) != 1 || sm.Notes[0] != tc.wantNote) {
				t.Errorf("notes = %q, want %q", sm.Notes, tc.wantNote)
			}
		})
	}
}

func TestMaxGoroutinesHoldsWhenMetricsCannotBeRead(t *testing.T) {
	t.Parallel()
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	s.FailMetrics = true
	clk := testingclock.NewFakeClock(time.Now())
	cfg := model.Config{REST: fakeapiserver.RESTConfig(t, s, fakeapiserver.TokenAdmin), APIServers: []string{s.Address()}, Samples: 1, RequestTimeout: 10 * time.Second, Clock: clk, MaxGoroutines: 500000}
	res, err := Run(context.Background(), cfg, &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range s.Requests() {
		if strings.HasPrefix(p, "/debug/pprof/goroutine?debug=2") {
			t.Errorf("the dump was taken although go_goroutines is unknown: %s", p)
		}
	}
	var le *model.GoroutineLimitError
	if errs := res.Instances[0].Errors; len(errs) < 2 || !errors.As(errs[1], &le) {
		t.Errorf("errors = %v, want a *GoroutineLimitError second", errs)
	}
	cfg.Force = true
	if _, err := Run(context.Background(), cfg, &recorder{}); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range s.Requests() {
		found = found || strings.HasPrefix(p, "/debug/pprof/goroutine?debug=2")
	}
	if !found {
		t.Error("--force did not take the dump")
	}
}
