package diagnosis

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/watches"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// apfSample is a sample without a goroutine dump: the APF rows, and
// apiserver_watch_events_total of pods when events >= 0.
func apfSample(at time.Time, status int, events float64, reqs ...apf.Request) watches.Sample {
	s := watches.Sample{CapturedAt: at, ProfileStatus: status, Requests: &apf.Requests{HasDetails: true, Requests: reqs}}
	start := 1.7e9
	if events >= 0 {
		s.Metrics = &watches.MetricsContext{ProcessStartTime: &start, WatchEvents: map[string]float64{"/pods": events}}
	}
	return s
}

// Without a goroutine dump, every row initializing past the stall bound
// is a finding: stuck when no event of its resource was written while it
// executed from the first sample to the last, undecided otherwise, with
// the reason the server gave; rows that ended or are young are not.
func TestDiagnoseAPF(t *testing.T) {
	a, b := t0.Add(5*time.Minute), t0.Add(6*time.Minute+10*time.Second)
	old, young := watchRequest("old", t0), watchRequest("young", b.Add(-StallBound))
	ended := watchRequest("ended", t0.Add(time.Second))
	tests := []struct {
		name       string
		samples    []watches.Sample
		want       []verdict
		reasons    []api.UndecidedReason
		incomplete int
		note       string
	}{
		{"profiling off, events grew: undecided", []watches.Sample{apfSample(a, 404, 10, old, ended), apfSample(b, 404, 25, old, young)},
			[]verdict{{Type: api.UndecidedInitialEvents, Severity: api.SeverityWarning, User: "old"}}, []api.UndecidedReason{api.UndecidedProfilingDisabled}, 1,
			"1 watch requests executing in the first sample had ended by the last: not stuck"},
		{"RBAC refuses pprof: undecided, the rule named", []watches.Sample{apfSample(a, 403, 10, old), apfSample(b, 403, 25, old)},
			[]verdict{{Type: api.UndecidedInitialEvents, Severity: api.SeverityWarning, User: "old"}}, []api.UndecidedReason{api.UndecidedProfilingForbidden}, 1, ""},
		{"no event of pods between the samples: stuck", []watches.Sample{apfSample(a, 404, 10, old), apfSample(b, 404, 10, old, young)},
			[]verdict{{Type: api.StuckInitialEvents, Severity: api.SeverityCritical, User: "old", Match: api.MatchExact}}, []api.UndecidedReason{""}, 0,
			"1 watch requests initializing for 30s or less at the last sample: none is stuck past that bound"},
		{"no event, but samples closer than the bound: undecided", []watches.Sample{apfSample(b.Add(-20*time.Second), 404, 10, old), apfSample(b, 404, 10, old)},
			[]verdict{{Type: api.UndecidedInitialEvents, Severity: api.SeverityWarning, User: "old"}}, []api.UndecidedReason{api.UndecidedProfilingDisabled}, 1, ""},
		{"no event, but the row started after the first sample: undecided", []watches.Sample{apfSample(a, 404, 10), apfSample(b, 404, 10, old)},
			[]verdict{{Type: api.UndecidedInitialEvents, Severity: api.SeverityWarning, User: "old"}}, []api.UndecidedReason{api.UndecidedProfilingDisabled}, 1, ""},
		{"one sample, no dump given: undecided", []watches.Sample{apfSample(b, 0, -1, old)},
			[]verdict{{Type: api.UndecidedInitialEvents, Severity: api.SeverityWarning, User: "old"}}, []api.UndecidedReason{api.UndecidedNoGoroutineDump}, 1, ""},
		{"no capture time: every row named, none cleared", []watches.Sample{apfSample(time.Time{}, 0, -1, old, young)},
			[]verdict{{Type: api.UndecidedInitialEvents, Severity: api.SeverityWarning, User: "old"}, {Type: api.UndecidedInitialEvents, Severity: api.SeverityWarning, User: "young"}},
			[]api.UndecidedReason{api.UndecidedNoGoroutineDump, api.UndecidedNoGoroutineDump}, 1, ""},
		{"only young rows: nothing", []watches.Sample{apfSample(b, 404, -1, young)}, nil, nil, 0,
			"1 watch requests initializing for 30s or less at the last sample: none is stuck past that bound"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Diagnose([]watches.Server{{Name: "s", Samples: tt.samples}}, Options{})
			if diff := cmp.Diff(tt.want, verdicts(r)); diff != "" {
				t.Errorf("verdicts (-want +got):\n%s", diff)
			}
			var reasons []api.UndecidedReason
			for _, f := range r.Findings {
				reasons = append(reasons, f.UndecidedReason)
			}
			if diff := cmp.Diff(tt.reasons, reasons); diff != "" {
				t.Errorf("undecided reasons (-want +got):\n%s", diff)
			}
			if len(r.Incomplete) != tt.incomplete {
				t.Errorf("incomplete %q, want %d", r.Incomplete, tt.incomplete)
			}
			if got := r.APIServers[0]; got.DumpFormat != FormatAPF || !strings.HasPrefix(got.Notes[0], "evidence: APF dump_requests and /metrics only") {
				t.Errorf("server: format %q, notes %q", got.DumpFormat, got.Notes)
			}
			if tt.note != "" && !strings.Contains(strings.Join(r.APIServers[0].Notes, "\n"), tt.note) {
				t.Errorf("notes %q lack %q", r.APIServers[0].Notes, tt.note)
			}
		})
	}
}

// An undecided row says why, how old it was at each sample, and the seats
// of its level.
func TestDiagnoseAPFEvidence(t *testing.T) {
	a, b := t0.Add(time.Minute), t0.Add(2*time.Minute)
	rq := watchRequest("u", t0)
	sa, sb := apfSample(a, http.StatusForbidden, 1, rq), apfSample(b, http.StatusForbidden, 3, rq)
	exec, limit := 2.0, 49.0
	sb.Metrics.Levels = map[string]watches.LevelSeats{"global-default": {Executing: &exec, Limit: &limit}}
	sa.Metrics.InitEvents, sb.Metrics.InitEvents = map[string]float64{"/pods": 5}, map[string]float64{"/pods": 2005}
	sa.Metrics.TerminatedWatchers, sb.Metrics.TerminatedWatchers = map[string]float64{"/pods": 0}, map[string]float64{"/pods": 1}
	r := Diagnose([]watches.Server{{Name: "s", Samples: []watches.Sample{sa, sb}}}, Options{})
	if len(r.Findings) != 2 || r.Findings[1].Type != api.WatchClosedByServer {
		t.Fatalf("findings %+v, want one, and the closure of pods (closed_test.go)", r.Findings)
	}
	f := r.Findings[0]
	want := []string{
		"APF dump_requests: executing watch of u started 2026-11-29T10:00:00Z, 2m0s before the capture",
		"APF dump_requests, sample by sample: 1m0s old at 10:01:00, 2m0s old at 10:02:00; initializing past the 30s stall bound on every sample",
		`apiserver_watch_events_total{resource="pods"} grew by 2 between the samples: some watch of pods received events, maybe this one`,
		`apiserver_init_events_total{resource="pods"} grew by 2000: some initial replays of pods ended between the samples (a replay still blocked adds nothing)`,
		`apiserver_terminated_watchers_total{resource="pods"} grew by 1: the cacher closed watchers of pods whose input buffer stayed full; a handler of one may still hold its APF seats`,
		"priority level global-default: 2 seats executing of a limit of 49 (apiserver_flowcontrol_current_executing_seats)",
	}
	if diff := cmp.Diff(want, f.Evidence); diff != "" {
		t.Errorf("evidence (-want +got):\n%s", diff)
	}
	if wantMsg := `initializing for 2m0s, holding 1 APF seat(s): stuck or slow: not decidable on this server: /debug/pprof answered 403: grant nonResourceURLs: ["/debug/pprof/*"], verbs: ["get"] to take a goroutine dump`; f.Message != wantMsg {
		t.Errorf("message %q, want %q", f.Message, wantMsg)
	}
}

// Rows of an APF dump that could not be read are never an all-clear:
// without a goroutine dump, each sample's unreadable rows are a warning
// naming the source, the count and the first lines, and the report is
// incomplete, whether or not a row could be read.
func TestDiagnoseAPFSkippedRows(t *testing.T) {
	a, b := t0.Add(5*time.Minute), t0.Add(6*time.Minute+10*time.Second)
	skipped := func(sm watches.Sample, n int) watches.Sample {
		sm.Source = "t2"
		sm.Requests.SkippedRows = n
		for i := range min(n, apf.MaxSkippedKept) {
			sm.Requests.Skipped = append(sm.Requests.Skipped, apf.Skipped{Line: i + 2, Reason: `field InitialSeats: "NaN" is not an integer`})
		}
		return sm
	}
	const first = `s: %s could not be read in the APF dump_requests of t2 (line 2: field InitialSeats: "NaN" is not an integer`
	tests := []struct {
		name    string
		samples []watches.Sample
		warning string
	}{
		{"every row unreadable", []watches.Sample{apfSample(a, 404, 10), skipped(apfSample(b, 404, 10), 1)},
			`s: 1 row could not be read in the APF dump_requests of t2 (line 2: field InitialSeats: "NaN" is not an integer)`},
		{"25 unreadable beside a young row", []watches.Sample{apfSample(a, 404, 10), skipped(apfSample(b, 404, 10, watchRequest("young", b.Add(-time.Second))), 25)},
			strings.Replace(first, "%s", "25 rows", 1) + `; line 3: field InitialSeats: "NaN" is not an integer; line 4: field InitialSeats: "NaN" is not an integer; 22 more)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Diagnose([]watches.Server{{Name: "s", Samples: tt.samples}}, Options{})
			if len(r.Findings) != 0 {
				t.Errorf("findings %v, want none", verdicts(r))
			}
			if diff := cmp.Diff([]string{tt.warning}, r.Warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{tt.warning + ": a watch they list is in no finding"}, r.Incomplete); diff != "" {
				t.Errorf("incomplete (-want +got):\n%s", diff)
			}
		})
	}
}
