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
	"github.com/watch-doctor/watch-doctor/pkg/audit"
)

// closedSample is a sample without a goroutine dump whose /metrics has
// apiserver_terminated_watchers_total of configmaps at terminated (absent
// when negative) and apiserver_init_events_total at initEvents, and whose
// APF dump lists reqs.
func closedSample(at time.Time, terminated, initEvents float64, reqs ...apf.Request) watches.Sample {
	start := 1.7e9
	m := &watches.MetricsContext{ProcessStartTime: &start,
		InitEvents:      map[string]float64{"/configmaps": initEvents},
		WatchEvents:     map[string]float64{"/configmaps": 1000},
		WatchEventBytes: map[string]float64{"/configmaps": 1000 * 512 * 1024},
	}
	if terminated >= 0 {
		m.TerminatedWatchers = map[string]float64{"/configmaps": terminated}
	}
	return watches.Sample{CapturedAt: at, ProfileStatus: 404, Metrics: m, Requests: &apf.Requests{HasDetails: true, Requests: reqs}}
}

// cmWatch is user's watch of configmaps in ns, started at started,
// holding seats.
func cmWatch(user string, started time.Time, seats int) apf.Request {
	rq := watchRequest(user, started)
	rq.Path, rq.Resource, rq.InitialSeats = "/api/v1/namespaces/ns/configmaps", "configmaps", seats
	return rq
}

type closedVerdict struct {
	Severity   api.Severity
	User       string
	Match      api.Match
	Candidates []string
	Closures   api.Closures
}

func closedVerdicts(r *api.Report) []closedVerdict {
	var out []closedVerdict
	for _, f := range r.Findings {
		if f.Type != api.WatchClosedByServer {
			continue
		}
		v := closedVerdict{Severity: f.Severity, Candidates: f.CandidateUsers(), Closures: *f.Closures}
		if f.Client != nil {
			v.User, v.Match = f.Client.User, f.Client.Match
		}
		out = append(out, v)
	}
	return out
}

// The server's closures of a resource are tied to the client whose watch
// of it came back with a new start time, as far as that goes: one client
// is named (likely), several are "one of these", none leaves the resource
// alone, said; one closure is a warning, two or more a loop, critical. A
// client that watched throughout (the fast one) is in no finding.
func TestClosedWatches(t *testing.T) {
	a, b := t0.Add(time.Minute), t0.Add(2*time.Minute+10*time.Second)
	fast := cmWatch("fast", t0, 8) // executing at a: still initializing, never back
	slowA, slowB := cmWatch("slow", t0.Add(50*time.Second), 8), cmWatch("slow", b.Add(-3*time.Second), 8)
	otherB := cmWatch("other", b.Add(-2*time.Second), 8)
	no := false
	window := b.Sub(a).Seconds()
	tests := []struct {
		name    string
		samples []watches.Sample
		want    []closedVerdict
		message string
	}{
		{"a loop tied to one client, replaying again at the last sample",
			[]watches.Sample{closedSample(a, 3, 100, fast, slowA), closedSample(b, 6, 250, fast, slowB)},
			[]closedVerdict{{Severity: api.SeverityCritical, User: "slow", Match: api.MatchLikely,
				Closures: api.Closures{Resource: "configmaps", WindowSeconds: window, Closed: 3, Returns: 1, ReplaySeats: 8, ReplayObjects: 50, ReplayBytes: 50 * 512 * 1024, CaughtUp: &no}}},
			"the server closed 3 watcher(s) of configmaps in 1m10s between the samples for not keeping up, and slow watched it again from the start 1 time(s) in that window (8 APF seat(s) per replay, about 50 objects (25.0 MiB)): it never caught up: at the last sample it was replaying the initial events again"},
		{"the counter first exposed after the first sample: one closure, a warning",
			[]watches.Sample{closedSample(a, -1, 0, slowA), closedSample(b, 1, 50, slowB)},
			[]closedVerdict{{Severity: api.SeverityWarning, User: "slow", Match: api.MatchLikely,
				Closures: api.Closures{Resource: "configmaps", WindowSeconds: window, Closed: 1, Returns: 1, ReplaySeats: 8, ReplayObjects: 50, ReplayBytes: 50 * 512 * 1024, CaughtUp: &no}}},
			""},
		{"two clients came back: one of these",
			[]watches.Sample{closedSample(a, 0, 0, slowA), closedSample(b, 2, 0, slowB, otherB)},
			[]closedVerdict{{Severity: api.SeverityCritical, Match: api.MatchAmbiguous, Candidates: []string{"other", "slow"},
				Closures: api.Closures{Resource: "configmaps", WindowSeconds: window, Closed: 2, Returns: 2}}},
			"the server closed 2 watcher(s) of configmaps in 1m10s between the samples for not keeping up; one of these 2 clients, whose watches of it came back with new start times, is the one (or several are): the counter is the resource's, not a client's"},
		{"no client came back: the resource alone, said",
			[]watches.Sample{closedSample(a, 0, 0, fast), closedSample(b, 2, 0, fast)},
			[]closedVerdict{{Severity: api.SeverityCritical,
				Closures: api.Closures{Resource: "configmaps", WindowSeconds: window, Closed: 2}}},
			"the server closed 2 watcher(s) of configmaps in 1m10s between the samples for not keeping up; the evidence could not tie them to a client: no watch of configmaps came back with a new start time in the APF dumps (a client between watches, or no APF dump with request details)"},
		{"no growth: nothing", []watches.Sample{closedSample(a, 4, 0, slowA), closedSample(b, 4, 0, slowB)}, nil, ""},
		{"one sample: nothing", []watches.Sample{closedSample(b, 4, 0, slowB)}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Diagnose([]watches.Server{{Name: "s", Samples: tt.samples}}, Options{})
			if diff := cmp.Diff(tt.want, closedVerdicts(r)); diff != "" {
				t.Errorf("verdicts (-want +got):\n%s", diff)
			}
			if tt.message == "" {
				return
			}
			for _, f := range r.Findings {
				if f.Type == api.WatchClosedByServer && f.Message != tt.message {
					t.Errorf("message\n%s\nwant\n%s", f.Message, tt.message)
				}
			}
			if got := r.Summary.ClosedWatches; got != len(tt.want) {
				t.Errorf("summary counts %d closed, want %d", got, len(tt.want))
			}
		})
	}
}

// A restart between the samples resets the counter: nothing is read
// into it.
func TestClosedWatchesAcrossARestart(t *testing.T) {
	sa, sb := closedSample(t0, 0, 0), closedSample(t0.Add(time.Minute), 5, 0)
	later := 1.8e9
	sb.Metrics.ProcessStartTime = &later
	r := Diagnose([]watches.Server{{Name: "s", Samples: []watches.Sample{sa, sb}}}, Options{})
	if got := closedVerdicts(r); got != nil {
		t.Errorf("closures across a restart: %+v", got)
	}
}

// The counter's reason label, where a server has one, splits the
// closures; the evidence and the advice say what the counter said and
// what to do (never restart the API server).
func TestClosedWatchesReasonsAndAdvice(t *testing.T) {
	a, b := t0.Add(time.Minute), t0.Add(2*time.Minute)
	sa, sb := closedSample(a, 1, 0), closedSample(b, 4, 0, cmWatch("slow", b.Add(-time.Second), 8))
	sa.Metrics.TerminatedReasons = map[string]map[string]float64{"/configmaps": {"buffer_full": 1}}
	sb.Metrics.TerminatedReasons = map[string]map[string]float64{"/configmaps": {"buffer_full": 3, "stalled": 1}}
	r := Diagnose([]watches.Server{{Name: "s", Samples: []watches.Sample{sa, sb}}}, Options{})
	got := closedVerdicts(r)
	if len(got) != 1 {
		t.Fatalf("findings %+v, want one", r.Findings)
	}
	if diff := cmp.Diff(map[string]int{"buffer_full": 2, "stalled": 1}, got[0].Closures.Reasons); diff != "" {
		t.Errorf("reasons (-want +got):\n%s", diff)
	}
	f := r.Findings[0]
	if !strings.Contains(f.Evidence[0], "; by reason: buffer_full 2, stalled 1") {
		t.Errorf("evidence %q lacks the reasons", f.Evidence[0])
	}
	advice := strings.Join(r.Advice, "\n")
	for _, w := range []string{`"slow" (likely match) came back each time`, "narrow its watch with a label or field selector", "restarting the API server does not help", "3 times: a loop"} {
		if !strings.Contains(advice, w) {
			t.Errorf("advice %q lacks %q", advice, w)
		}
	}
}

// The audit log ties closures the APF dumps could not: one user and path
// whose watches of the resource ended long before their timeoutSeconds
// in the window; its evidence says how long each lasted and how soon the
// next began. A watch that ran its course, or of another resource, is
// not counted.
func TestClosedWatchesFromTheAuditLog(t *testing.T) {
	a, b := t0.Add(time.Minute), t0.Add(3*time.Minute)
	ev := func(user, path string, received time.Time, lasted time.Duration, line int) audit.Event {
		return audit.Event{Source: "audit.log", Line: line, User: user, Verb: "watch", Path: path,
			RequestReceived: received, Completed: received.Add(lasted), TimeoutSeconds: 600}
	}
	cm := "/api/v1/namespaces/ns/configmaps"
	events := []audit.Event{
		ev("slow", cm, a.Add(10*time.Second), 12*time.Second, 3),
		ev("slow", cm, a.Add(31*time.Second), 11*time.Second, 9),
		ev("fast", cm, t0.Add(-9*time.Minute), 10*time.Minute, 12),
		ev("other", "/api/v1/namespaces/ns/pods", a.Add(20*time.Second), time.Second, 14),
	}
	r := Diagnose([]watches.Server{{Name: "s", Samples: []watches.Sample{closedSample(a, 0, 0), closedSample(b, 2, 0)}}}, Options{Audit: events})
	got := closedVerdicts(r)
	window := b.Sub(a).Seconds()
	want := []closedVerdict{{Severity: api.SeverityCritical, User: "slow", Match: api.MatchLikely,
		Closures: api.Closures{Resource: "configmaps", WindowSeconds: window, Closed: 2, Returns: 1}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("verdicts (-want +got):\n%s", diff)
	}
	f := r.Findings[0]
	wantEv := "audit log (audit.log:3): 2 watch request(s) of /api/v1/namespaces/ns/configmaps by slow ended long before their timeoutSeconds (600s), after 12s, 11s; the next began 9s after each ended"
	if !slices.Contains(f.Evidence, wantEv) {
		t.Errorf("evidence %q lacks %q", f.Evidence, wantEv)
	}
}

func TestAuditResourceKey(t *testing.T) {
	for path, want := range map[string]string{
		"/api/v1/namespaces/ns/configmaps":        "/configmaps",
		"/api/v1/configmaps":                      "/configmaps",
		"/api/v1/watch/namespaces/ns/configmaps":  "/configmaps",
		"/apis/apps/v1/namespaces/ns/deployments": "apps/deployments",
		"/apis/apps/v1/deployments":               "apps/deployments",
		"/healthz":                                "",
		"/api/v1/namespaces/ns":                   "/namespaces",
		"":                                        "",
	} {
		if got := auditResourceKey(path); got != want {
			t.Errorf("auditResourceKey(%q) = %q, want %q", path, got, want)
		}
	}
}

// Where the APF dumps saw several clients come back, the audit log's
// early ends pick the one whose watches the server ended (likely), and
// the message says of how many; where they saw one, the audit log agrees
// in the message. Where it shows the early ends of several, or of none of
// them, they stay "one of these".
func TestClosedWatchesAuditLogPicksAmongReturns(t *testing.T) {
	a, b := t0.Add(time.Minute), t0.Add(2*time.Minute+10*time.Second)
	cm := "/api/v1/namespaces/ns/configmaps"
	ev := func(user string, received time.Time) audit.Event {
		return audit.Event{Source: "audit.log", Line: 7, User: user, Verb: "watch", Path: cm,
			RequestReceived: received, Completed: received.Add(20 * time.Second), TimeoutSeconds: 3600}
	}
	slowB, otherB := cmWatch("slow", b.Add(-3*time.Second), 8), cmWatch("other", b.Add(-2*time.Second), 8)
	tests := []struct {
		name    string
		reqs    []apf.Request
		events  []audit.Event
		user    string
		message string
	}{
		{"two came back, one ended early", []apf.Request{slowB, otherB}, []audit.Event{ev("slow", a.Add(5*time.Second)), ev("slow", a.Add(30*time.Second))}, "slow",
			"the server closed 2 watcher(s) of configmaps in 1m10s between the samples for not keeping up, and slow watched it again from the start 1 time(s) in that window (8 APF seat(s) per replay): it never caught up: at the last sample it was replaying the initial events again; of the 2 clients whose watches of it came back, the audit log shows only slow's ending long before their timeoutSeconds (2 time(s) in that window)"},
		{"one came back, the audit log agrees", []apf.Request{slowB}, []audit.Event{ev("slow", a.Add(5*time.Second))}, "slow",
			"the server closed 2 watcher(s) of configmaps in 1m10s between the samples for not keeping up, and slow watched it again from the start 1 time(s) in that window (8 APF seat(s) per replay): it never caught up: at the last sample it was replaying the initial events again; the audit log agrees: 1 of its watches of it ended long before their timeoutSeconds in that window"},
		{"two came back, both ended early", []apf.Request{slowB, otherB}, []audit.Event{ev("slow", a.Add(5*time.Second)), ev("other", a.Add(6*time.Second))}, "", ""},
		{"two came back, neither ended early", []apf.Request{slowB, otherB}, nil, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Diagnose([]watches.Server{{Name: "s", Samples: []watches.Sample{closedSample(a, 0, 0), closedSample(b, 2, 0, tt.reqs...)}}}, Options{Audit: tt.events})
			got := closedVerdicts(r)
			if len(got) != 1 {
				t.Fatalf("verdicts %+v, want one", got)
			}
			if tt.user == "" {
				if got[0].Match != api.MatchAmbiguous || len(got[0].Candidates) != 2 {
					t.Errorf("verdict %+v, want one of the 2", got[0])
				}
				return
			}
			if got[0].User != tt.user || got[0].Match != api.MatchLikely {
				t.Errorf("verdict %+v, want %s (likely)", got[0], tt.user)
			}
			if f := r.Findings[0]; f.Message != tt.message {
				t.Errorf("message\n%s\nwant\n%s", f.Message, tt.message)
			}
		})
	}
}

// A watch the first sample's APF dump lists with a start after that
// sample's time (started between its /metrics and its dump: a client's
// first watch, initializing) is no return: only the later samples' dumps
// are read for those. Serve's two looks hit it (a client started with
// serve was "one of these" with the slow one).
func TestClosedWatchesFirstSampleIsNoReturn(t *testing.T) {
	a, b := t0.Add(time.Minute), t0.Add(time.Minute+20*time.Second)
	fastA := cmWatch("fast", a.Add(300*time.Millisecond), 8)
	slowB := cmWatch("slow", b.Add(-3*time.Second), 8)
	r := Diagnose([]watches.Server{{Name: "s", Samples: []watches.Sample{closedSample(a, 0, 0, fastA), closedSample(b, 1, 0, slowB)}}}, Options{})
	got := closedVerdicts(r)
	if len(got) != 1 || got[0].User != "slow" || got[0].Match != api.MatchLikely || len(got[0].Candidates) != 0 {
		t.Errorf("verdicts %+v, want slow alone (likely)", got)
	}
}
