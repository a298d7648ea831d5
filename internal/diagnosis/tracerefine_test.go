package diagnosis

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/watch-doctor/watch-doctor/internal/watches"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// With debug=2 dumps, the dumps tie watchers to requests and the trace
// decides stuck or progressing per goroutine id: never weaker than the
// dumps alone, and never used to weaken a dump's stuck.
func TestTraceRefinesDumpVerdicts(t *testing.T) {
	rq := watchRequest("slow", t0.Add(-5*time.Minute))
	twoSamples := func(wait int, event2 string) watches.Server {
		w1, w2 := initialWatcher(500, wait), initialWatcher(500, wait)
		w1.Event, w1.CacheWatcher, w2.Event, w2.CacheWatcher = "0xe1", "0xc1", event2, "0xc1"
		return watches.Server{Name: "srv", Samples: []watches.Sample{sample(t0, []api.Watcher{w1}, rq), sample(t0.Add(40*time.Second), []api.Watcher{w2}, rq)}}
	}
	tests := []struct {
		name         string
		srv          watches.Server
		trace        watches.TraceGoroutine
		without      api.FindingType
		with         api.FindingType
		wantEvidence string
		wantNote     string
	}{
		{"same event 40 s apart: slow alone, stuck with a still trace", twoSamples(0, "0xe1"), stuckG(500), api.SlowInitialEvents, api.StuckInitialEvents, "decided by the execution trace trace.out: goroutine 500", ""},
		{"another event: slow, confirmed", twoSamples(0, "0xe2"), pacedG(500), api.SlowInitialEvents, api.SlowInitialEvents, "progress confirmed by the execution trace", ""},
		{"stuck by the dumps stays stuck", twoSamples(2, "0xe1"), pacedG(500), api.StuckInitialEvents, api.StuckInitialEvents, "disagrees, and is not used to weaken", "check that the trace was taken between the samples"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			without := Diagnose([]watches.Server{tt.srv}, Options{})
			tt.srv.Trace = &watches.Trace{Source: "trace.out", Window: 30 * time.Second, Goroutines: []watches.TraceGoroutine{tt.trace}}
			with := Diagnose([]watches.Server{tt.srv}, Options{})
			if len(without.Findings) != 1 || len(with.Findings) != 1 {
				t.Fatalf("findings %d without the trace, %d with it; want 1 each", len(without.Findings), len(with.Findings))
			}
			a, b := without.Findings[0], with.Findings[0]
			if a.Type != tt.without || b.Type != tt.with {
				t.Errorf("type %s without the trace, %s with it; want %s, %s", a.Type, b.Type, tt.without, tt.with)
			}
			if diff := cmp.Diff(a.Client, b.Client); diff != "" {
				t.Errorf("the dumps' client match changed with the trace (-without +with):\n%s", diff)
			}
			if !strings.Contains(strings.Join(b.Evidence, "\n"), tt.wantEvidence) {
				t.Errorf("evidence %q, want %q", b.Evidence, tt.wantEvidence)
			}
			notes := strings.Join(with.APIServers[0].Notes, "\n")
			if !strings.Contains(notes, "evidence: debug=2 dumps tie watchers to requests") || !strings.Contains(notes, tt.wantNote) {
				t.Errorf("notes %q, want the evidence choice and %q", notes, tt.wantNote)
			}
		})
	}
}
