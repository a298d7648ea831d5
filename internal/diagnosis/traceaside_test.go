package diagnosis

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/watch-doctor/watch-doctor/internal/watches"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
)

// TestEveryPieceOfEvidenceIsOfTheProcessItClaims: a trace that
// contradicts the samples beside it (more watch-path goroutines than
// go_goroutines, far more initial-phase watchers than executing watch
// requests, a window longer than the time between the samples) is set
// aside with a warning, and no finding is decided from it.
func TestEveryPieceOfEvidenceIsOfTheProcessItClaims(t *testing.T) {
	early := t0.Add(-3 * time.Minute)
	rows := []apf.Request{resourceRequest("slow", "pods", early), resourceRequest("paced", "pods", early.Add(time.Second))}
	many := func(n int) []watches.TraceGoroutine {
		var gs []watches.TraceGoroutine
		for i := range n {
			gs = append(gs, stuckG(int64(i+1)))
		}
		return gs
	}
	goroutines := func(s watches.Server, n float64) watches.Server {
		for i := range s.Samples {
			s.Samples[i].Metrics.Goroutines = &n
		}
		return s
	}
	for _, tc := range []struct {
		name  string
		s     watches.Server
		aside string // "" when the trace decides
	}{
		{"consistent", goroutines(traceServer(many(2), rows, rows, nil, nil), 2227), ""},
		{"more watchers than goroutines", goroutines(traceServer(many(50), rows, rows, nil, nil), 40),
			"it holds 50 watch-path goroutines, more than the 40 goroutines the server ran (go_goroutines)"},
		{"50 watchers, 2 executing watch requests", goroutines(traceServer(many(50), rows, rows, nil, nil), 2227),
			"it holds 50 initial-phase watchers, more than the 2 executing watch requests the APF dumps list"},
		{"a window longer than the wall time", func() watches.Server {
			s := goroutines(traceServer(many(2), rows, rows, nil, nil), 2227)
			s.Samples[1].CapturedAt = s.Samples[0].CapturedAt.Add(1200 * time.Millisecond)
			return s
		}(), "its window of 1m10s is longer than the 1.2s between the samples it was taken between"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Diagnose([]watches.Server{tc.s}, Options{})
			var aside string
			for _, w := range r.Warnings {
				if strings.Contains(w, "set aside") {
					aside = w
				}
			}
			if tc.aside == "" {
				if aside != "" || len(r.Findings) == 0 {
					t.Errorf("a consistent trace: warning %q, %d findings", aside, len(r.Findings))
				}
				return
			}
			if !strings.Contains(aside, tc.aside) {
				t.Errorf("warnings %q\nwant one setting the trace aside: %q", r.Warnings, tc.aside)
			}
			// Nothing is decided from it; the APF rows past the stall
			// bound stay findings, undecided (fail closed).
			var got []string
			for _, f := range r.Findings {
				got = append(got, string(f.Type)+" "+f.Client.User)
			}
			want := []string{"UndecidedInitialEvents slow", "UndecidedInitialEvents paced"}
			if diff := cmp.Diff(want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
				t.Errorf("findings of a trace set aside: want its APF rows undecided, nothing decided (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTheParsersCapIsALowerBound: a trace past the parser's goroutine
// bound says its counts are lower bounds.
func TestTheParsersCapIsALowerBound(t *testing.T) {
	s := traceServer([]watches.TraceGoroutine{stuckG(1)}, nil, nil, nil, nil)
	s.Trace.Dropped = 30000
	r := Diagnose([]watches.Server{s}, Options{})
	want := "srv: the trace holds at least 30001 watch-path goroutines: the parser keeps 1, so every count from the trace is a lower bound, and the watches of the 30000 past its bound are not decided"
	if !strings.Contains(strings.Join(r.Incomplete, "\n"), want) {
		t.Errorf("incomplete %q\nwant %q", r.Incomplete, want)
	}
}
