package diagnosis

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/watch-doctor/watch-doctor/internal/watches"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/trace"
)

const traceWindow = 70 * time.Second

func stuckG(id int64) watches.TraceGoroutine {
	return watches.TraceGoroutine{Goroutine: trace.Goroutine{ID: id, StartState: trace.StateWaiting, EndState: trace.StateWaiting, LongestGap: traceWindow},
		Class: watches.TraceWatcher, Phase: api.PhaseInitial, InSend: true, SeenInitial: true}
}

func pacedG(id int64) watches.TraceGoroutine {
	g := stuckG(id)
	g.Transitions, g.Wakeups, g.LongestGap = 520, 175, 1200*time.Millisecond
	g.WokenBy = []trace.Waker{{ID: id + 1, Count: 175}}
	return g
}

func cacheWaitG(id int64) watches.TraceGoroutine {
	return watches.TraceGoroutine{Goroutine: trace.Goroutine{ID: id, StartState: trace.StateWaiting, EndState: trace.StateWaiting, LongestGap: traceWindow}, Class: watches.TraceCacheWait}
}

// traceServer is a server with sample A at t0, the trace, and sample B at
// t0+71s; events are apiserver_watch_events_total per resource in A and B.
func traceServer(gs []watches.TraceGoroutine, a, b []apf.Request, eventsA, eventsB map[string]float64) watches.Server {
	start := 1.0
	sa := watches.Sample{Source: "A", CapturedAt: t0, Requests: &apf.Requests{HasDetails: true, Requests: a},
		Metrics: &watches.MetricsContext{ProcessStartTime: &start, WatchEvents: eventsA}}
	sb := watches.Sample{Source: "B", CapturedAt: t0.Add(traceWindow + time.Second), Requests: &apf.Requests{HasDetails: true, Requests: b},
		Metrics: &watches.MetricsContext{ProcessStartTime: &start, WatchEvents: eventsB}}
	return watches.Server{Name: "srv", Samples: []watches.Sample{sa, sb}, Trace: &watches.Trace{Source: "trace.out", Window: traceWindow, Bytes: 51 << 20, Goroutines: gs}}
}

// traceVerdictRow is one finding as the tests compare it.
type traceVerdictRow struct {
	Type       api.FindingType
	User       string
	Match      api.Match
	Candidates string
	IDs        string
}

func traceVerdicts(r *api.Report) []traceVerdictRow {
	var out []traceVerdictRow
	for _, f := range r.Findings {
		v := traceVerdictRow{Type: f.Type, Candidates: strings.Join(f.CandidateUsers(), "|")}
		if f.Client != nil {
			v.User, v.Match = f.Client.User, f.Client.Match
		}
		var ids []string
		for _, id := range f.GoroutineIDs {
			ids = append(ids, time.Duration(id).String())
		}
		v.IDs = strings.Join(ids, ",")
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b traceVerdictRow) int {
		return strings.Compare(string(a.Type)+a.User+a.Candidates, string(b.Type)+b.User+b.Candidates)
	})
	return out
}

func TestTraceElimination(t *testing.T) {
	early := t0.Add(-5 * time.Minute)
	slow, paced, cm := resourceRequest("slow", "pods", early), resourceRequest("paced", "pods", early.Add(time.Second)), resourceRequest("cm", "configmaps", early.Add(2*time.Second))
	podsOnly := map[string]float64{"/pods": 10}
	podsGrew := map[string]float64{"/pods": 90}
	both := map[string]float64{"/pods": 10, "/configmaps": 4}
	bothPodsGrew := map[string]float64{"/pods": 90, "/configmaps": 4}
	const id = "1ns" // the goroutine id 1, as traceVerdicts prints ids
	tests := []struct {
		name           string
		srv            watches.Server
		want           []traceVerdictRow
		wantIncomplete int
		wantNote       string
	}{
		{"every watcher stuck: every row named", traceServer([]watches.TraceGoroutine{stuckG(1), stuckG(2)}, []apf.Request{slow, paced}, []apf.Request{slow, paced}, podsOnly, podsGrew),
			[]traceVerdictRow{{Type: api.StuckInitialEvents, User: "paced", Match: api.MatchExact}, {Type: api.StuckInitialEvents, User: "slow", Match: api.MatchExact}}, 0, "every initial-phase watch"},
		{"no watcher stuck: every row named progressing", traceServer([]watches.TraceGoroutine{pacedG(1), pacedG(3)}, []apf.Request{slow, paced}, []apf.Request{slow, paced}, podsOnly, podsGrew),
			[]traceVerdictRow{{Type: api.SlowInitialEvents, User: "paced", Match: api.MatchExact}, {Type: api.SlowInitialEvents, User: "slow", Match: api.MatchExact}}, 0, "2 rows progressing"},
		{"one row, one stuck watcher: named with its goroutine", traceServer([]watches.TraceGoroutine{stuckG(1)}, []apf.Request{slow}, []apf.Request{slow}, podsOnly, podsOnly),
			[]traceVerdictRow{{Type: api.StuckInitialEvents, User: "slow", Match: api.MatchExact, IDs: id}}, 0, ""},
		{"stuck and paced on one resource: k of n, never the paced one alone", traceServer([]watches.TraceGoroutine{stuckG(1), pacedG(3)}, []apf.Request{slow, paced}, []apf.Request{slow, paced}, podsOnly, podsGrew),
			[]traceVerdictRow{{Type: api.SlowInitialEvents, Match: api.MatchAmbiguous, Candidates: "slow|paced", IDs: "3ns"}, {Type: api.StuckInitialEvents, Match: api.MatchAmbiguous, Candidates: "slow|paced", IDs: id}}, 0, ""},
		{"zero delta of a resource decides its row, the rest follows", traceServer([]watches.TraceGoroutine{stuckG(1), pacedG(3)}, []apf.Request{cm, paced}, []apf.Request{cm, paced}, both, bothPodsGrew),
			[]traceVerdictRow{{Type: api.SlowInitialEvents, User: "paced", Match: api.MatchExact, IDs: "3ns"}, {Type: api.StuckInitialEvents, User: "cm", Match: api.MatchExact, IDs: id}}, 0, "per resource"},
		{"zero delta decides one, two left ambiguous", traceServer([]watches.TraceGoroutine{stuckG(1), stuckG(2), pacedG(3)}, []apf.Request{cm, slow, paced}, []apf.Request{cm, slow, paced}, both, bothPodsGrew),
			[]traceVerdictRow{{Type: api.SlowInitialEvents, Match: api.MatchAmbiguous, Candidates: "slow|paced", IDs: "3ns"}, {Type: api.StuckInitialEvents, User: "cm", Match: api.MatchExact}, {Type: api.StuckInitialEvents, Match: api.MatchAmbiguous, Candidates: "slow|paced"}}, 0, "per resource"},
		{"a row that stopped between the samples is not stuck", traceServer([]watches.TraceGoroutine{stuckG(1)}, []apf.Request{slow, paced}, []apf.Request{slow}, podsOnly, podsGrew),
			[]traceVerdictRow{{Type: api.StuckInitialEvents, User: "slow", Match: api.MatchExact, IDs: id}}, 0, "had stopped by the last: not stuck"},
		{"a cache wait is its own class, and blocks the zero-delta rule", traceServer([]watches.TraceGoroutine{stuckG(1), cacheWaitG(5)}, []apf.Request{cm, slow}, []apf.Request{cm, slow}, both, both),
			[]traceVerdictRow{{Type: api.StuckInitialEvents, Match: api.MatchAmbiguous, Candidates: "cm|slow", IDs: id}, {Type: api.WaitingForWatchCache, Match: api.MatchAmbiguous, Candidates: "cm|slow", IDs: "5ns"}}, 0, ""},
		// The row no watcher accounts for fails closed: one of the two.
		{"more rows than watchers: the extra row undecided, the report incomplete", traceServer([]watches.TraceGoroutine{stuckG(1)}, []apf.Request{slow, paced}, []apf.Request{slow, paced}, podsOnly, podsGrew),
			[]traceVerdictRow{{Type: api.StuckInitialEvents, Match: api.MatchAmbiguous, Candidates: "slow|paced", IDs: id}, {Type: api.UndecidedInitialEvents, Match: api.MatchAmbiguous, Candidates: "slow|paced"}}, 1, ""},
		{"one row left for two watchers names nobody, and counts one watch, the stuck one (clampToAPF)", traceServer([]watches.TraceGoroutine{stuckG(1), pacedG(3)}, []apf.Request{paced}, []apf.Request{paced}, podsOnly, podsGrew),
			[]traceVerdictRow{{Type: api.StuckInitialEvents, IDs: id}}, 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Diagnose([]watches.Server{tt.srv}, Options{})
			if diff := cmp.Diff(tt.want, traceVerdicts(r)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			if len(r.Incomplete) != tt.wantIncomplete {
				t.Errorf("incomplete %q, want %d entries", r.Incomplete, tt.wantIncomplete)
			}
			notes := strings.Join(r.APIServers[0].Notes, "\n")
			if !strings.Contains(notes, "evidence: execution trace trace.out") || !strings.Contains(notes, tt.wantNote) {
				t.Errorf("notes %q, want the evidence note and %q", notes, tt.wantNote)
			}
			for _, f := range r.Findings {
				prefix := "decided by the execution trace trace.out"
				if f.Type == api.UndecidedInitialEvents {
					prefix = "not " + prefix
				}
				if !slices.ContainsFunc(f.Evidence, func(e string) bool { return strings.HasPrefix(e, prefix) }) {
					t.Errorf("finding %s %v: evidence %q names no trace", f.Type, f.Client, f.Evidence)
				}
				if f.Type == api.SlowInitialEvents && f.Client != nil && f.Client.User != "" && f.Client.Match == api.MatchAmbiguous {
					t.Errorf("a progressing watch named alone: %+v", f.Client)
				}
			}
		})
	}
}

// The trace route's words: the window proven and the progress seen.
func TestTraceEvidenceWords(t *testing.T) {
	// Two rows: within what APF lists, each watcher is a finding (clampToAPF).
	rows := []apf.Request{resourceRequest("a", "pods", t0.Add(-time.Minute)), resourceRequest("b", "pods", t0.Add(-time.Minute))}
	r := Diagnose([]watches.Server{traceServer([]watches.TraceGoroutine{stuckG(1), pacedG(3)}, rows, rows, nil, nil)}, Options{})
	var ev []string
	for _, f := range r.Findings {
		ev = append(ev, f.Evidence...)
	}
	all := strings.Join(ev, "\n")
	for _, want := range []string{
		"goroutine 1 in sendWatchCacheEvent from processInterval: no state change in 1m10s",
		"goroutine 3 in the initial-events replay: woken 175 times, longest gap 1.2s, 520 state changes in 1m10s; woken by goroutine 4 (175 times)",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("evidence %q\nwant a line with %q", all, want)
		}
	}
}
