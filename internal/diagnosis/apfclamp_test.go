package diagnosis

import (
	"strings"
	"testing"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/watches"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// TestNoCountExceedsWhatAPFLists: evidence within traceAside's slack
// that shows more initial-phase watchers than the APF dumps list
// executing watch requests (a trace of 7 stuck watchers, a debug=2 dump
// of 4, beside 2 rows) is not set aside, but no count of the report
// exceeds APF's 2: stuck watches, seats held, the server's initial-phase
// count and its priority level's seats. The report says the counts are
// APF's, and is incomplete: the watches past them are not decided.
func TestNoCountExceedsWhatAPFLists(t *testing.T) {
	early := t0.Add(-3 * time.Minute)
	rows := []apf.Request{resourceRequest("slow", "pods", early), resourceRequest("paced", "pods", early.Add(time.Second))}
	var gs []watches.TraceGoroutine
	for i := range 7 {
		gs = append(gs, stuckG(int64(i+1)))
	}
	at := t0.Add(10 * time.Minute)
	dump := watches.Server{Name: "srv", Samples: []watches.Sample{sample(at,
		[]api.Watcher{initialWatcher(1000, 5), initialWatcher(1100, 5), initialWatcher(1200, 5), initialWatcher(1300, 5)},
		watchRequest("a", t0), watchRequest("b", t0.Add(time.Second)))}}
	for _, tc := range []struct {
		name, evidence string
		s              watches.Server
		n0             int // the evidence's initial-phase watchers
	}{
		{"trace", "execution trace", traceServer(gs, rows, rows, nil, nil), 7},
		{"dump", "goroutine dump", dump, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Diagnose([]watches.Server{tc.s}, Options{})
			for _, w := range r.Warnings {
				if strings.Contains(w, "set aside") {
					t.Fatalf("within the slack the evidence is not set aside: %q", w)
				}
			}
			s := r.Summary
			if s.StuckWatches == 0 || s.StuckWatches > 2 || s.StuckSeats > 2 {
				t.Errorf("summary: %d stuck watches, %d seats held; want 1 or 2 of each, at most what APF lists (2)", s.StuckWatches, s.StuckSeats)
			}
			n := 0
			for _, f := range r.Findings {
				if seatHolding[f.Type] {
					n++
				}
			}
			if n > 2 {
				t.Errorf("%d initial-phase findings, more than the 2 rows APF lists", n)
			}
			for _, l := range r.PriorityLevels {
				if l.StuckSeats > 2 {
					t.Errorf("priority level %s: %d stuck seats, more than the 2 rows APF lists", l.Name, l.StuckSeats)
				}
			}
			if len(r.UnmatchedWatchers) != tc.n0-n {
				t.Errorf("%d watchers listed unmatched, want the %d of the findings past APF's count", len(r.UnmatchedWatchers), tc.n0-n)
			}
			a := r.APIServers[0]
			if a.InitialPhase > 2 {
				t.Errorf("server: %d in the initial phase, more than the 2 rows APF lists", a.InitialPhase)
			}
			want := "srv: the " + tc.evidence + " shows "
			note := ""
			for _, n := range r.Incomplete {
				if strings.Contains(n, "each count here is APF's") {
					note = n
				}
			}
			if !strings.HasPrefix(note, want) || !strings.Contains(note, "more than the 2 executing watch requests the APF dumps list") {
				t.Errorf("incomplete %q\nwant one starting %q saying the counts are APF's", r.Incomplete, want)
			}
		})
	}
}
