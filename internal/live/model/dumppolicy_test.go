package model

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/clock"

	"github.com/watch-doctor/watch-doctor/internal/english"
	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

func TestConfigDumpPolicy(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name        string
		cfg         Config
		force       bool
		wantRefused string
	}{
		{"a permit decides", Config{}, false, ""},
		{"force", Config{Force: true}, true, ""},
		{"no dump fetched", Config{Only: []api.FileKind{api.FileMetrics}}, false, "this run's fetches do not include the goroutine dump"},
		{"trace chosen", Config{Trace: TraceConfig{Evidence: EvidenceTrace}, Words: english.Words{Evidence: "evidence:"}}, false, "the evidence chosen is an execution trace (evidence: trace)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.cfg.DumpPolicy()
			if p.Force != tt.force || p.Refused != tt.wantRefused {
				t.Errorf("DumpPolicy() = force %v, refused %q; want %v, %q", p.Force, p.Refused, tt.force, tt.wantRefused)
			}
		})
	}
}

// TestDoNoHarmTheClientRefusesDumpsThePolicyForbids: the client itself
// refuses a debug=2 request the run's evidence policy does not allow,
// before sending it, whoever asks: only Force, or a permit whose
// estimated pause fits the budget, lets one through. The fake server
// fails the test on any debug=2 request of a refused case.
func TestDoNoHarmTheClientRefusesDumpsThePolicyForbids(t *testing.T) {
	cheap := Estimate{Bytes: 1 << 20, Pause: 10 * time.Millisecond, Basis: "test"}
	dear := Estimate{Bytes: 64 << 20, Pause: time.Second, Basis: "test"}
	for _, tc := range []struct {
		name    string
		cfg     Config
		permit  *Estimate
		refused string // "" when the dump is allowed
	}{
		{name: "no permit", refused: "no decision of this run allowed it"},
		{name: "a permit, no budget", permit: &dear},
		{name: "a permit within the budget", cfg: Config{MaxPause: 250 * time.Millisecond}, permit: &cheap},
		{name: "a permit over the budget", cfg: Config{MaxPause: 250 * time.Millisecond}, permit: &dear, refused: "its estimated pause of 1s is over the pause budget of 250ms"},
		{name: "a permit without an estimate", cfg: Config{MaxPause: 250 * time.Millisecond}, permit: &Estimate{}, refused: "its pause cannot be estimated, and the pause budget is 250ms"},
		{name: "evidence trace", cfg: Config{Trace: TraceConfig{Evidence: EvidenceTrace}, Words: english.Words{Evidence: "--evidence"}}, permit: &cheap, refused: "the evidence chosen is an execution trace (--evidence trace)"},
		{name: "serve's fetches", cfg: Config{Only: []api.FileKind{api.FileMetrics, api.FileGoroutineDebug1, api.FileTrace}}, permit: &cheap, refused: "this run's fetches do not include the goroutine dump"},
		{name: "force over evidence trace", cfg: Config{Force: true, Trace: TraceConfig{Evidence: EvidenceTrace}}},
		{name: "force over the budget", cfg: Config{Force: true, MaxPause: time.Millisecond}, permit: &dear},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := fakeapiserver.Start(t, golden.Fixture("t2"))
			if tc.refused != "" {
				s.ForbidDumps(t)
			}
			cfg := tc.cfg
			cfg.REST, cfg.RequestTimeout, cfg.Clock = fakeapiserver.RESTConfig(t, s, fakeapiserver.TokenAdmin), 10*time.Second, clock.RealClock{}
			c, err := cfg.ClientFor(Instance{Name: "api", Address: s.Address(), Pinned: true})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if tc.permit != nil {
				ctx = WithDumpPermit(ctx, *tc.permit)
			}
			resp, err := c.Get(ctx, PathOf(api.FileGoroutineDebug2))
			if resp != nil {
				resp.Close()
			}
			got := ""
			var re *DumpRefusedError
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
