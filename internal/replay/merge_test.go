package replay

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// TestPrepend runs the seed scenario's four columns of ours in one replay,
// and the first alone in another, standing in for the upstream column of
// another release: prepending the one to the rest gives what one replay of
// all four gives, verdict and timeline included.
func TestPrepend(t *testing.T) {
	sc, err := Builtin("issue-131721")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	opts := Options{Timeline: true}
	all, err := Run(ctx, sc, []Backend{NewOurs(api.ColumnUnpatched, 0), NewOurs(api.ColumnPR141899, sc.StallTimeout.Duration), NewOursComplete(sc.StallTimeout.Duration)}, opts)
	if err != nil {
		t.Fatal(err)
	}
	first, err := Run(ctx, sc, []Backend{NewOurs(api.ColumnUnpatched, 0)}, opts)
	if err != nil {
		t.Fatal(err)
	}
	rest, err := Run(ctx, sc, []Backend{NewOurs(api.ColumnPR141899, sc.StallTimeout.Duration), NewOursComplete(sc.StallTimeout.Duration)}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := Prepend(rest, first); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(all, rest); diff != "" {
		t.Errorf("prepended replay (-one run +prepended):\n%s", diff)
	}
}

func TestPrependRefusesAnotherReplay(t *testing.T) {
	base := api.Replay{Kind: api.KindReplay, Scenario: "a", DurationSeconds: 60, TickSeconds: 1}
	for _, tc := range []struct {
		name   string
		change func(*api.Replay)
		want   string
	}{
		{"kind", func(r *api.Replay) { r.Kind = "Report" }, `not a replay result: kind "Report"`},
		{"scenario", func(r *api.Replay) { r.Scenario = "b" }, `a replay of scenario "b", want "a"`},
		{"duration", func(r *api.Replay) { r.DurationSeconds = 30 }, "a replay of 30s at ticks of 1s, want 60s at 1s"},
		{"timeline", func(r *api.Replay) { r.Timeline = &api.Timeline{} }, "timeline recorded in one replay only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, other := base, base
			tc.change(&other)
			err := Prepend(&res, &other)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Prepend: %v, want %q", err, tc.want)
			}
		})
	}
}
