package diagnosis

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/watch-doctor/watch-doctor/internal/watches"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

func TestPickSamples(t *testing.T) {
	d2 := &watches.Dump{Format: watches.FormatDebug2}
	d1 := &watches.Dump{Format: watches.FormatDebug1}
	tests := []struct {
		name       string
		dumps      []*watches.Dump
		last, prev int
	}{
		{"none", nil, -1, -1},
		{"no dump in any sample", []*watches.Dump{nil, nil}, -1, -1},
		{"one debug=2", []*watches.Dump{d2}, 0, -1},
		{"two debug=2 around a sample without", []*watches.Dump{d2, nil, d2, nil}, 2, 0},
		{"an aggregated last has no earlier to compare", []*watches.Dump{d2, d1}, 1, -1},
		{"an aggregated earlier is passed over", []*watches.Dump{d2, d1, d2}, 2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ss []watches.Sample
			for _, d := range tt.dumps {
				ss = append(ss, watches.Sample{Dump: d})
			}
			last, prev := pickSamples(ss)
			if last != tt.last || prev != tt.prev {
				t.Errorf("pickSamples = %d, %d; want %d, %d", last, prev, tt.last, tt.prev)
			}
		})
	}
}

// What the steps add is summed in step order and merged after what the
// report already holds; the server's notes follow its own.
func TestAddedMerge(t *testing.T) {
	r := &api.Report{Warnings: []string{"w0"}, Findings: []api.Finding{{Message: "f0"}}}
	var out added
	out.add(added{notes: []string{"n1"}, warnings: []string{"w1"}, findings: []*api.Finding{{Message: "f1"}}})
	out.add(added{notes: []string{"n2"}, warnings: []string{"w2"}, incomplete: []string{"i2"}, findings: []*api.Finding{{Message: "f2"}},
		unmatchedRequests: []api.Request{{User: "u"}}, unmatchedWatchers: []api.UnmatchedWatcher{{GoroutineID: 7}}, levels: []api.PriorityLevel{{Name: "l"}}})
	found := out.findings
	out.merge(r, api.APIServer{Name: "s", Notes: []string{"n0"}})
	want := &api.Report{
		Warnings:          []string{"w0", "w1", "w2"},
		Incomplete:        []string{"i2"},
		Findings:          []api.Finding{{Message: "f0"}, {Message: "f1"}, {Message: "f2"}},
		UnmatchedRequests: []api.Request{{User: "u"}},
		UnmatchedWatchers: []api.UnmatchedWatcher{{GoroutineID: 7}},
		PriorityLevels:    []api.PriorityLevel{{Name: "l"}},
		APIServers:        []api.APIServer{{Name: "s", Notes: []string{"n0", "n1", "n2"}}},
	}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("merged report (-want +got):\n%s", diff)
	}
	if found[0] != nil || found[1] != nil {
		t.Errorf("merge kept its pointers to the findings it copied: %v", found)
	}
}

// A server without a goroutine dump (and no trace) gets a note, a warning
// and its /metrics, and nothing else.
func TestNoDump(t *testing.T) {
	rss := 3e9
	s := watches.Server{Name: "s", Samples: []watches.Sample{{Metrics: &watches.MetricsContext{ResidentMemoryBytes: &rss}}}}
	info, out := serverSteps(context.Background(), s, Options{})
	want := api.APIServer{Name: "s", Samples: 1, Notes: []string{"no goroutine dump: watchers cannot be examined"}, ResidentMemoryBytes: rss}
	if diff := cmp.Diff(want, info); diff != "" {
		t.Errorf("info (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(added{warnings: []string{"s: no goroutine dump given: nothing to diagnose"}}, out, cmp.AllowUnexported(added{})); diff != "" {
		t.Errorf("added (-want +got):\n%s", diff)
	}
}

// describeDump fills the server's info and says when the dump is partial;
// the dump's warnings carry the server's name.
func TestDescribeDump(t *testing.T) {
	goroutines := 1000.0
	at := t0.Add(time.Minute)
	cur := watches.Sample{CapturedAt: at, Metrics: &watches.MetricsContext{Goroutines: &goroutines}, Dump: &watches.Dump{
		Format: watches.FormatDebug2, Goroutines: 500, Notes: []string{"n"}, Warnings: []string{"3 unknown lines skipped"},
		Watchers: []api.Watcher{initialWatcher(10, 1), {GoroutineID: 20, Phase: api.PhaseStreaming}},
	}}
	info, out := describeDump(api.APIServer{Name: "s"}, "s", cur)
	utc := at.UTC()
	want := api.APIServer{Name: "s", CapturedAt: &utc, DumpFormat: watches.FormatDebug2, Goroutines: 500, Watchers: 2, InitialPhase: 1,
		Coverage: &api.Coverage{Goroutines: 500, Of: 1000, Reason: "it holds 500 goroutines but go_goroutines said 1000: it was cut, or comes from another process"}}
	if diff := cmp.Diff(want, info); diff != "" {
		t.Errorf("info (-want +got):\n%s", diff)
	}
	wantOut := added{notes: []string{"n"}, warnings: []string{"s: 3 unknown lines skipped"},
		incomplete: []string{"s: partial goroutine dump, covering " + want.Coverage.Text() + ": " + want.Coverage.Reason + "; watches in the missing goroutines are not decided"}}
	if diff := cmp.Diff(wantOut, out, cmp.AllowUnexported(added{})); diff != "" {
		t.Errorf("added (-want +got):\n%s", diff)
	}
}
