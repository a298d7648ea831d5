package harm

import (
	"context"
	"strings"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/metrics"
)

// costConfig is a run's config against s, its instance pinned or not.
func costConfig(t *testing.T, s *fakeapiserver.Server) model.Config {
	t.Helper()
	return model.Config{REST: fakeapiserver.RESTConfig(t, s, fakeapiserver.TokenAdmin), RequestTimeout: 10 * time.Second, Clock: testingclock.NewFakeClock(time.Now()), Parallel: 2}
}

func costClient(t *testing.T, s *fakeapiserver.Server, pinned bool) *model.Client {
	t.Helper()
	c, err := costConfig(t, s).ClientFor(model.Instance{Name: "api", Address: s.Address(), Pinned: pinned})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// firstPauses is the pause histogram of a /metrics read of capture: the
// run's first reading.
func firstPauses(t *testing.T, capture string) *metrics.Pauses {
	t.Helper()
	p, n, err := readPauses(context.Background(), costClient(t, fakeapiserver.Start(t, golden.Fixture(capture)), true))
	if err != nil || n == 0 {
		t.Fatalf("reading %s's pauses: %d bytes, %v", capture, n, err)
	}
	return &p
}

// TestFinishCost: the cost is the growth of the pause histogram from the
// run's first reading to one more /metrics read after the last fetch;
// every way it cannot be measured is said, never as "0 pauses".
func TestFinishCost(t *testing.T) {
	t.Parallel()
	t1, t2 := firstPauses(t, "t1"), firstPauses(t, "t2")
	for _, tc := range []struct {
		name     string
		first    *metrics.Pauses
		note     string // the meter's note
		capture  string // what the read after the last fetch sees
		fail     bool   // that read answers 500
		unpinned bool
		measured bool
		pauses   bool // more than none
		wantNote string
	}{
		{name: "no pause", first: t1, capture: "t1", measured: true, wantNote: WholeProcessNote},
		{name: "the fixture's dump", first: t1, capture: "t2", measured: true, pauses: true, wantNote: WholeProcessNote},
		{name: "restarted", first: t2, capture: "t1", wantNote: "(the server restarted during the run?)"},
		{name: "the last read failed", first: t1, capture: "t1", fail: true, wantNote: "the /metrics read after the last fetch failed, so the pauses are not measured"},
		{name: "no read succeeded", capture: "t1", wantNote: "no /metrics read of the run succeeded"},
		{name: "no histogram", note: "exports no go_sched_pauses_total_other_seconds", capture: "t1", wantNote: "exports no go_sched_pauses_total_other_seconds"},
		{name: "through the kubeconfig host", first: t1, capture: "t2", unpinned: true, wantNote: "read through the kubeconfig host, not pinned to one process"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := fakeapiserver.Start(t, golden.Fixture(tc.capture))
			s.FailMetrics = tc.fail
			var progress strings.Builder
			cfg := costConfig(t, s)
			cfg.Progress = &progress
			ir := model.InstanceResult{
				Meter:   model.CostMeter{First: tc.first, Note: tc.note, ExtraBytes: 10},
				Samples: []api.Sample{{Fetches: []api.FetchInfo{{Bytes: 100}, {Bytes: 20}}}},
			}
			finishCost(context.Background(), cfg, costClient(t, s, !tc.unpinned), &ir)
			got := ir.Cost
			if got == nil {
				t.Fatal("no cost")
			}
			if got.PausesMeasured != tc.measured || (got.Pauses > 0) != tc.pauses || !strings.Contains(got.Note, tc.wantNote) {
				t.Errorf("cost %+v: want measured %v, pauses %v, a note saying %q", *got, tc.measured, tc.pauses, tc.wantNote)
			}
			read := tc.first != nil && !tc.unpinned
			if extra := got.BytesRead - 130; (extra > 0) != (read && !tc.fail) {
				t.Errorf("bytes read %d: the fetches' 120 and 10 counted, and %d more, want more only when /metrics was read again", got.BytesRead, extra)
			}
			if want := "api: cost of this run: " + pausesText(got); !strings.HasPrefix(progress.String(), want) {
				t.Errorf("progress %q, want it to start with %q", progress.String(), want)
			}
		})
	}
}

// TestFinishCostsReadsOnlyWhatARunCanCompare: no cost for a run of some
// files alone (the metrics command), none once interrupted, none for an
// instance no longer read; the others' are measured.
func TestFinishCostsReadsOnlyWhatARunCanCompare(t *testing.T) {
	t.Parallel()
	s := fakeapiserver.Start(t, golden.Fixture("t1"))
	c := costClient(t, s, true)
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		only []api.FileKind
		want []bool
	}{
		{"a run", context.Background(), nil, []bool{true, false}},
		{"some files alone", context.Background(), []api.FileKind{api.FileMetrics}, []bool{false, false}},
		{"interrupted", canceled, nil, []bool{false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := costConfig(t, s)
			cfg.Only = tc.only
			results := make([]model.InstanceResult, 2)
			FinishCosts(tc.ctx, cfg, []*model.Client{c, nil}, results)
			for i, want := range tc.want {
				if got := results[i].Cost != nil; got != want {
					t.Errorf("instance %d: cost %v, want one: %v", i, results[i].Cost, want)
				}
			}
		})
	}
}
