package diagnosis

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/watch-doctor/watch-doctor/internal/english"
	"github.com/watch-doctor/watch-doctor/internal/watches"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

func TestAPFWarnings(t *testing.T) {
	at := t0.Add(10 * time.Minute)
	tests := []struct {
		name     string
		rs       *apf.Requests
		at       time.Time
		findings int
		want     []string
	}{
		{"no APF dump, nothing found", nil, at, 0, nil},
		{"no APF dump, something found", nil, at, 1, []string{"s: no APF dump_requests given: findings name no client (capture /debug/api_priority_and_fairness/dump_requests?includeRequestDetails=1)"}},
		{"whole", &apf.Requests{HasDetails: true}, at, 1, nil},
		{"no details, no capture time, skipped rows", &apf.Requests{Skipped: []apf.Skipped{{Line: 4, Reason: "bad"}, {Line: 9, Reason: "bad"}}}, time.Time{}, 0, []string{
			"s: the APF dump was taken without includeRequestDetails=1: it names no verbs or paths, so every executing request outside the exempt level is a candidate and clients can only be ambiguous",
			"s: no capture time (captured-at.txt or --captured-at): ages from APF are unavailable, clients are matched by count and order only",
			"s: 2 APF rows skipped (first at line 4: bad)",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dumpCase{server: "s", cur: watches.Sample{CapturedAt: tt.at, Requests: tt.rs}, opts: Options{Words: english.Words{CapturedAt: "--captured-at"}}}
			if diff := cmp.Diff(tt.want, c.apfWarnings(tt.findings)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestMatchGaps(t *testing.T) {
	two := []api.Watcher{initialWatcher(10, 1), initialWatcher(20, 1)}
	one := []apf.Request{watchRequest("a", t0)}
	tests := []struct {
		name    string
		rs      *apf.Requests
		reqs    []apf.Request
		partial bool
		want    string
	}{
		{"enough requests", &apf.Requests{}, append(one, one...), false, ""},
		{"fewer requests than watchers wins over skipped rows", &apf.Requests{Skipped: []apf.Skipped{{Line: 1}}}, one, true, "the APF dump lists 1 executing watch requests for 2 initial-phase watchers (it was taken after the goroutine dump)"},
		{"skipped rows", &apf.Requests{Skipped: []apf.Skipped{{Line: 1}}}, append(one, one...), true, "1 APF rows were skipped"},
		{"a partial dump", &apf.Requests{}, append(one, one...), true, "the goroutine dump is partial"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dumpCase{cur: watches.Sample{Requests: tt.rs}, partial: tt.partial}
			if got := c.matchGaps(tt.reqs, two); got != tt.want {
				t.Errorf("matchGaps = %q, want %q", got, tt.want)
			}
		})
	}
}

// A watcher whose handler is not in a dump that names parents gets a
// note; a finding no request fits says why.
func TestAnnotate(t *testing.T) {
	w := initialWatcher(10, 3)
	w.Handler = nil
	c := dumpCase{server: "s", cur: sample(t0.Add(10*time.Minute), []api.Watcher{w})}
	f := &api.Finding{Type: api.StuckInitialEvents, Watcher: w}
	out := c.annotate([]*api.Finding{f}, []api.Watcher{w})
	if diff := cmp.Diff([]string{"watcher goroutine 10: its handler goroutine is not in the dump"}, out.notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
	if len(out.findings) != 1 || len(f.Evidence) != 1 || f.Evidence[0][:40] != "no executing watch request in the APF du" {
		t.Errorf("findings %d, evidence %q", len(out.findings), f.Evidence)
	}
}
