package diagnosis

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/watch-doctor/watch-doctor/internal/english"
	"github.com/watch-doctor/watch-doctor/internal/watches"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

var t0 = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)

// initialWatcher is a blocked initial-phase watcher with a full trio.
func initialWatcher(id int64, wait int) api.Watcher {
	return api.Watcher{
		GoroutineID: id, Phase: api.PhaseInitial, InSend: true, Blocked: true, State: "select", WaitMinutes: wait,
		Handler:        &api.Handler{GoroutineID: id - 100, State: "select", WaitMinutes: wait, Block: api.HandlerClientNotReading, ConnGoroutineID: id - 200, ConnInDump: true},
		APFGoroutineID: id - 1,
	}
}

func watchRequest(user string, started time.Time) apf.Request {
	return apf.Request{
		PriorityLevel: "global-default", FlowSchema: "global-default", QueueIndex: 3, IndexInQueue: -1,
		ArriveTime: started, StartTime: started, InitialSeats: 1, User: user, Verb: "watch",
		Path: "/api/v1/namespaces/ns/pods", Namespace: "ns", Resource: "pods", APIVersion: "v1",
	}
}

func sample(at time.Time, ws []api.Watcher, reqs ...apf.Request) watches.Sample {
	return watches.Sample{CapturedAt: at, Dump: &watches.Dump{Format: watches.FormatDebug2, Goroutines: 100, Watchers: ws, HasParentIDs: true, APIServer: true}, Requests: &apf.Requests{HasDetails: true, Requests: reqs}}
}

type verdict struct {
	ID       int64
	Type     api.FindingType
	Severity api.Severity
	User     string
	Match    api.Match
}

func verdicts(r *api.Report) []verdict {
	var out []verdict
	for _, f := range r.Findings {
		v := verdict{ID: f.Watcher.GoroutineID, Type: f.Type, Severity: f.Severity}
		if f.Client != nil {
			v.User, v.Match = f.Client.User, f.Client.Match
		}
		out = append(out, v)
	}
	return out
}

func TestMatchClients(t *testing.T) {
	at := t0.Add(10 * time.Minute)
	tests := []struct {
		name string
		s    watches.Sample
		want []verdict
		// unmatched users left over on the APF side
		unmatched []string
	}{
		{
			"single request: exact",
			sample(at, []api.Watcher{initialWatcher(1000, 3)}, watchRequest("alice", t0)),
			[]verdict{{1000, api.StuckInitialEvents, api.SeverityCritical, "alice", api.MatchExact}}, nil,
		},
		{
			// bob, past the stall bound with no watcher, fails closed.
			"only one request old enough: exact, the other undecided",
			sample(at, []api.Watcher{initialWatcher(1000, 5)}, watchRequest("alice", t0), watchRequest("bob", at.Add(-2*time.Minute))),
			[]verdict{{1000, api.StuckInitialEvents, api.SeverityCritical, "alice", api.MatchExact}, {0, api.UndecidedInitialEvents, api.SeverityWarning, "bob", ""}}, nil,
		},
		{
			"ages pin each watcher: both exact",
			sample(at, []api.Watcher{initialWatcher(1000, 8), initialWatcher(2000, 3)},
				watchRequest("bob", at.Add(-4*time.Minute)), watchRequest("alice", at.Add(-9*time.Minute))),
			[]verdict{{1000, api.StuckInitialEvents, api.SeverityCritical, "alice", api.MatchExact}, {2000, api.StuckInitialEvents, api.SeverityCritical, "bob", api.MatchExact}}, nil,
		},
		{
			"same ages: ambiguous, goroutine-id order is not evidence",
			sample(at, []api.Watcher{initialWatcher(2000, 2), initialWatcher(1000, 0)},
				watchRequest("second", t0.Add(30*time.Millisecond)), watchRequest("first", t0)),
			[]verdict{{2000, api.StuckInitialEvents, api.SeverityCritical, "", api.MatchAmbiguous}, {1000, api.SlowInitialEvents, api.SeverityWarning, "", api.MatchAmbiguous}}, nil,
		},
		{
			"more requests than watchers, nothing separates them: ambiguous",
			sample(at, []api.Watcher{initialWatcher(1000, 2)}, watchRequest("alice", t0), watchRequest("bob", t0.Add(time.Second))),
			// Candidates of an ambiguous watcher are listed with it, not
			// as leftovers.
			[]verdict{{1000, api.StuckInitialEvents, api.SeverityCritical, "", api.MatchAmbiguous}}, nil,
		},
		{
			"two watchers, one request (the other ended before the APF dump): never exact, and one watch counted (clampToAPF)",
			sample(at, []api.Watcher{initialWatcher(1000, 2), initialWatcher(2000, 0)}, watchRequest("alice", t0)),
			[]verdict{{1000, api.StuckInitialEvents, api.SeverityCritical, "alice", api.MatchAmbiguous}}, nil,
		},
		{
			"two watchers both older than the one request the APF dump lists: ambiguous, never exact, and one watch counted (clampToAPF)",
			sample(at, []api.Watcher{initialWatcher(1000, 8), initialWatcher(2000, 9)}, watchRequest("alice", t0)),
			[]verdict{{1000, api.StuckInitialEvents, api.SeverityCritical, "alice", api.MatchAmbiguous}}, nil,
		},
		{
			"no request old enough: the watcher unmatched; one row, so one watch counted, the most severe (clampToAPF)",
			sample(at, []api.Watcher{initialWatcher(1000, 9)}, watchRequest("young", at.Add(-time.Minute))),
			[]verdict{{ID: 1000, Type: api.StuckInitialEvents, Severity: api.SeverityCritical}}, nil,
		},
		{
			"a request within the stall bound and no watcher: unmatched, no finding",
			sample(at, []api.Watcher{initialWatcher(1000, 9)}, watchRequest("fresh", at.Add(-StallBound))),
			[]verdict{{ID: 1000, Type: api.StuckInitialEvents, Severity: api.SeverityCritical}}, []string{"fresh"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Diagnose([]watches.Server{{Name: "s", Samples: []watches.Sample{tc.s}}}, Options{CaptureSlack: time.Second})
			if diff := cmp.Diff(tc.want, verdicts(r)); diff != "" {
				t.Errorf("verdicts (-want +got):\n%s", diff)
			}
			var left []string
			for _, u := range r.UnmatchedRequests {
				left = append(left, u.User)
			}
			if diff := cmp.Diff(tc.unmatched, left); diff != "" {
				t.Errorf("unmatched requests (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNoRequestDetailsOnlyAmbiguous(t *testing.T) {
	at := t0.Add(10 * time.Minute)
	s := sample(at, []api.Watcher{initialWatcher(1000, 3)}, watchRequest("alice", t0))
	s.Requests.HasDetails = false
	for i := range s.Requests.Requests {
		r := &s.Requests.Requests[i]
		r.FlowDistinguisher, r.User, r.Verb, r.Path, r.Namespace, r.Resource = r.User, "", "", "", "", ""
	}
	r := Diagnose([]watches.Server{{Name: "s", Samples: []watches.Sample{s}}}, Options{})
	want := []verdict{{1000, api.StuckInitialEvents, api.SeverityCritical, "alice", api.MatchAmbiguous}}
	if diff := cmp.Diff(want, verdicts(r)); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
}

func TestAmbiguousMatchListsCandidatesAndCommonFields(t *testing.T) {
	at := t0.Add(10 * time.Minute)
	r := Diagnose([]watches.Server{{Name: "s", Samples: []watches.Sample{sample(at, []api.Watcher{initialWatcher(1000, 2)}, watchRequest("alice", t0), watchRequest("bob", t0))}}}, Options{})
	f := r.Findings[0]
	if len(f.Candidates) != 2 {
		t.Fatalf("candidates = %+v, want alice and bob", f.Candidates)
	}
	c := f.Client
	if c.User != "" || c.Namespace != "ns" || c.Resource != "pods" || c.Match != api.MatchAmbiguous || c.StartTime != nil {
		t.Errorf("client = %+v: want only the fields both candidates share", c)
	}
	// Both candidates hold 1 seat of the same level: whichever it is,
	// the watch holds 1 seat there.
	if r.Summary.StuckSeats != 1 {
		t.Errorf("seats of an ambiguous match whose candidates all hold 1 seat of one level: got %d, want 1", r.Summary.StuckSeats)
	}
	s := sample(at, []api.Watcher{initialWatcher(1000, 2)}, watchRequest("alice", t0), watchRequest("bob", t0))
	s.Requests.Requests[1].InitialSeats = 3
	if r := Diagnose([]watches.Server{{Name: "s", Samples: []watches.Sample{s}}}, Options{}); r.Summary.StuckSeats != 0 || r.Summary.StuckUnattributed != 1 {
		t.Errorf("candidates holding different seats: stuck seats %d (unattributed %d), want 0 (1)", r.Summary.StuckSeats, r.Summary.StuckUnattributed)
	}
}

func TestNoCaptureTimeMatchesByOrderAndSaysSo(t *testing.T) {
	s := sample(time.Time{}, []api.Watcher{initialWatcher(1000, 3)}, watchRequest("alice", t0))
	r := Diagnose([]watches.Server{{Name: "s", Samples: []watches.Sample{s}}}, Options{Words: english.Words{CapturedAt: "--captured-at"}})
	if got := verdicts(r); len(got) != 1 || got[0].User != "alice" {
		t.Fatalf("verdicts = %+v", got)
	}
	want := "s: no capture time (captured-at.txt or --captured-at): ages from APF are unavailable"
	found := false
	for _, w := range r.Warnings {
		if len(w) >= len(want) && w[:len(want)] == want {
			found = true
		}
	}
	if !found {
		t.Errorf("warnings %q lack %q", r.Warnings, want)
	}
}

func ExampleDiagnose() {
	at := time.Date(2026, 11, 29, 10, 24, 32, 0, time.UTC)
	w := api.Watcher{GoroutineID: 33988, Phase: api.PhaseInitial, InSend: true, Blocked: true, State: "select", WaitMinutes: 2,
		Handler: &api.Handler{GoroutineID: 33855, Block: api.HandlerClientNotReading, ConnGoroutineID: 33847}, APFGoroutineID: 33987}
	req := apf.Request{PriorityLevel: "global-default", FlowSchema: "global-default", IndexInQueue: -1, InitialSeats: 1,
		StartTime: at.Add(-149 * time.Second), User: "slow-informer", Verb: "watch", Path: "/api/v1/namespaces/rand2/pods", Namespace: "rand2", Resource: "pods"}
	r := Diagnose([]watches.Server{{Name: "apiserver-1", Samples: []watches.Sample{{
		CapturedAt: at,
		Dump:       &watches.Dump{Format: watches.FormatDebug2, Goroutines: 2223, Watchers: []api.Watcher{w}, HasParentIDs: true, APIServer: true},
		Requests:   &apf.Requests{HasDetails: true, Requests: []apf.Request{req}},
	}}}}, Options{})
	for _, f := range r.Findings {
		fmt.Printf("%s %s: %s %s in %s, blocked >= %d min, goroutines %v, match %s\n",
			f.Severity, f.Type, f.Client.User, f.Client.Resource, f.Client.Namespace, *f.BlockedMinutes, f.GoroutineIDs, f.Client.Match)
	}
	// Output:
	// critical StuckInitialEvents: slow-informer pods in rand2, blocked >= 2 min, goroutines [33988 33855 33987], match exact
}

// TestSummarizeCountsEveryType: a finding of each type of api.FindingTypes
// is counted in its own Summary field, the stuck ones with their
// goroutines and seats, and a finding of an unknown type in none.
func TestSummarizeCountsEveryType(t *testing.T) {
	r := &api.Report{APIServers: []api.APIServer{{Goroutines: 10}, {Goroutines: 5}}}
	want := api.Summary{Goroutines: 15, StuckGoroutines: 2, StuckSeats: 2, StuckUnattributed: 1}
	for i, row := range api.FindingTypes() {
		for range i + 1 {
			r.Findings = append(r.Findings, api.Finding{Type: row.Type, GoroutineIDs: []int64{1}})
		}
		*row.Count(&want) = i + 1
	}
	// The stuck row has one unattributed finding above; one more, attributed.
	r.Findings = append(r.Findings, api.Finding{Type: api.StuckInitialEvents, GoroutineIDs: []int64{1}, Client: &api.Client{Seats: 2, Match: api.MatchExact}},
		api.Finding{Type: "NoSuchType"})
	want.StuckWatches++
	got := summarize(r)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("summarize (-want +got):\n%s", diff)
	}
}

// A goroutine dump that holds no kube-apiserver code (another process's)
// decides no watch of its server: the report is incomplete, naming the
// server, and never a complete "no watch stuck". The same sample with
// kube-apiserver code is a complete answer.
func TestDiagnoseForeignDumpIsIncomplete(t *testing.T) {
	t.Parallel()
	for _, apiServer := range []bool{false, true} {
		s := sample(t0.Add(time.Minute), nil)
		s.Dump.APIServer = apiServer
		r := Diagnose([]watches.Server{{Name: "apiserver-1", Samples: []watches.Sample{s}}}, Options{})
		foreign := strings.Contains(strings.Join(r.Incomplete, "\n"), "apiserver-1: its goroutine dump holds no kube-apiserver code")
		if foreign == apiServer || len(r.Incomplete) != map[bool]int{false: 1, true: 0}[apiServer] {
			t.Errorf("kube-apiserver code %v: incomplete %q", apiServer, r.Incomplete)
		}
	}
}
