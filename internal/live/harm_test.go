package live

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/english"
	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// TestDoNoHarmTheClientRefusesDumpsThePolicyForbids: the client itself
// refuses a debug=2 request the run's evidence policy does not allow,
// before sending it, whoever asks: only Force, or a permit whose
// estimated pause fits the budget, lets one through. The fake server
// fails the test on any debug=2 request of a refused case.
func TestDoNoHarmTheClientRefusesDumpsThePolicyForbids(t *testing.T) {
	cheap := model.Estimate{Bytes: 1 << 20, Pause: 10 * time.Millisecond, Basis: "test"}
	dear := model.Estimate{Bytes: 64 << 20, Pause: time.Second, Basis: "test"}
	for _, tc := range []struct {
		name    string
		cfg     model.Config
		permit  *model.Estimate
		refused string // "" when the dump is allowed
	}{
		{name: "no permit", refused: "no decision of this run allowed it"},
		{name: "a permit, no budget", permit: &dear},
		{name: "a permit within the budget", cfg: model.Config{MaxPause: 250 * time.Millisecond}, permit: &cheap},
		{name: "a permit over the budget", cfg: model.Config{MaxPause: 250 * time.Millisecond}, permit: &dear, refused: "its estimated pause of 1s is over the pause budget of 250ms"},
		{name: "a permit without an estimate", cfg: model.Config{MaxPause: 250 * time.Millisecond}, permit: &model.Estimate{}, refused: "its pause cannot be estimated, and the pause budget is 250ms"},
		{name: "evidence trace", cfg: model.Config{Trace: model.TraceConfig{Evidence: model.EvidenceTrace}, Words: english.Words{Evidence: "--evidence"}}, permit: &cheap, refused: "the evidence chosen is an execution trace (--evidence trace)"},
		{name: "serve's fetches", cfg: model.Config{Only: []api.FileKind{api.FileMetrics, api.FileGoroutineDebug1, api.FileTrace}}, permit: &cheap, refused: "this run's fetches do not include the goroutine dump"},
		{name: "force over evidence trace", cfg: model.Config{Force: true, Trace: model.TraceConfig{Evidence: model.EvidenceTrace}}},
		{name: "force over the budget", cfg: model.Config{Force: true, MaxPause: time.Millisecond}, permit: &dear},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := fakeapiserver.Start(t, golden.Fixture("t2"))
			if tc.refused != "" {
				s.ForbidDumps(t)
			}
			cfg := tc.cfg
			cfg.REST, cfg.RequestTimeout, cfg.Samples = fakeapiserver.RESTConfig(t, s, fakeapiserver.TokenAdmin), 10*time.Second, 1
			cfg, err := withDefaults(cfg)
			if err != nil {
				t.Fatal(err)
			}
			c, err := cfg.ClientFor(model.Instance{Name: "api", Address: s.Address(), Pinned: true})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if tc.permit != nil {
				ctx = model.WithDumpPermit(ctx, *tc.permit)
			}
			resp, err := c.Get(ctx, model.PathOf(api.FileGoroutineDebug2))
			if resp != nil {
				resp.Close()
			}
			got := ""
			var re *model.DumpRefusedError
			if errors.As(err, &re) {
				got = re.Why
			} else if err != nil {
				t.Fatalf("Get = %v, want a *DumpRefusedError or none", err)
			}
			if diff := cmp.Diff(tc.refused, got); diff != "" {
				t.Errorf("refusal (-want +got):\n%s", diff)
			}
			if tc.refused != "" && len(s.Requests()) != 0 {
				t.Errorf("the refused request reached the server: %q", s.Requests())
			}
		})
	}
}

// TestDoNoHarmATraceRunNeverDumps: with the execution trace as evidence,
// a trace that fails (here 404) leaves sample 2 without a dump: the
// dump is withheld, with the policy's reason, not taken.
func TestDoNoHarmATraceRunNeverDumps(t *testing.T) {
	s := fakeapiserver.Start(t, golden.Fixture("t1"), golden.Fixture("t2"))
	s.ForbidDumps(t)
	cfg := hostileConfig(t, s)
	cfg.Force, cfg.Samples, cfg.Interval = false, 2, 70*time.Second
	// The instance tracing goes from sample 1 to sample 2 through its
	// trace, without waiting on the clock.
	cfg.Clock = fakeapiserver.NoWaitClock{FakeClock: testingclock.NewFakeClock(time.Now()), T: t}
	cfg.Trace = model.TraceConfig{Evidence: model.EvidenceTrace}
	res, err := Run(context.Background(), cfg, NewCaptures())
	if err != nil {
		t.Fatal(err)
	}
	ir := res.Instances[0]
	var why []string
	for _, w := range ir.Withheld {
		why = append(why, w.Refused)
	}
	// One per sample without a dump: sample 1's, whose place the trace
	// took, and sample 2's.
	want := []string{"the evidence chosen is an execution trace", "the evidence chosen is an execution trace"}
	if diff := cmp.Diff(want, why); diff != "" {
		t.Errorf("withheld dumps (-want +got):\n%s", diff)
	}
}
