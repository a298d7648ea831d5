package diagnosis

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/english"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// The words the caller gives are woven into the sentences; without them
// the sentences name only what needs no command line.
func TestWords(t *testing.T) {
	cli := english.Words{Resample: "diagnose --interval 3m30s", CapturedAt: "--captured-at"}
	for _, tc := range []struct{ got, want string }{
		{resample(cli), "diagnose --interval 3m30s, or two captures that far apart"},
		{resample(english.Words{}), "two captures that far apart"},
		{captureTime(cli), "captured-at.txt or --captured-at"},
		{captureTime(english.Words{}), "captured-at.txt"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// adviceElsewhere are the finding types whose advice is not an Advice
// line, and where it is instead.
var adviceElsewhere = map[api.FindingType]string{
	api.UndecidedInitialEvents: "the report's Incomplete lines, phrased by the caller",
}

// TestEveryFindingTypeHasAdvice: each row of api.FindingTypes has an entry
// in typeAdvice, and a report holding one finding of that type (at its
// worst severity) gets one Advice line naming its API server (the held
// handlers' line speaks of the whole report), unless the type's advice is
// said elsewhere.
func TestEveryFindingTypeHasAdvice(t *testing.T) {
	for _, row := range api.FindingTypes() {
		t.Run(string(row.Type), func(t *testing.T) {
			if _, ok := typeAdvice[row.Type]; !ok {
				t.Fatalf("typeAdvice has no entry for %s", row.Type)
			}
			r := &api.Report{
				APIServers: []api.APIServer{{Name: "srv-1", Samples: 1}},
				Findings:   []api.Finding{{Type: row.Type, Severity: row.Severities[0], APIServer: "srv-1"}},
			}
			got := advice(r, english.Words{})
			if _, ok := adviceElsewhere[row.Type]; ok {
				if len(got) != 0 {
					t.Errorf("advice for %s, said elsewhere, = %q, want none", row.Type, got)
				}
				return
			}
			if len(got) != 1 || !strings.Contains(got[0], "srv-1: ") && row.Type != api.HeldAfterWatcherClosed {
				t.Errorf("advice = %q, want one line for srv-1 (one for the report for %s)", got, api.HeldAfterWatcherClosed)
			}
		})
	}
	for typ := range typeAdvice {
		if _, ok := api.FindingTypeOf(typ); !ok {
			t.Errorf("typeAdvice has an entry for %s, which has no row in api.FindingTypes", typ)
		}
	}
}

// TestAdvice: the advice of a report with findings of several types on two
// API servers, in the order of api.FindingTypes, then the unmatched
// requests.
func TestAdvice(t *testing.T) {
	stuck := func(server, user string, seats int) api.Finding {
		return api.Finding{Type: api.StuckInitialEvents, Severity: api.SeverityCritical, APIServer: server, GoroutineIDs: []int64{1, 2, 3},
			Client: &api.Client{User: user, Path: "/api/v1/pods", Seats: seats, Match: api.MatchExact}}
	}
	r := &api.Report{
		APIServers: []api.APIServer{{Name: "a", Samples: 2}, {Name: "b", Samples: 1}},
		Findings: []api.Finding{
			stuck("b", "zed", 1),
			stuck("a", "bob", 2),
			stuck("a", "bob", 1),
			{Type: api.StuckInitialEvents, Severity: api.SeverityCritical, APIServer: "a", GoroutineIDs: []int64{9},
				Client: &api.Client{Match: api.MatchAmbiguous}, Candidates: []api.Request{{User: "x"}, {User: "y"}}},
			{Type: api.SlowInitialEvents, Severity: api.SeverityWarning, APIServer: "a"},
			{Type: api.SlowInitialEvents, Severity: api.SeverityWarning, APIServer: "b"},
			{Type: api.SlowInitialEvents, Severity: api.SeverityInfo, APIServer: "b"},
			{Type: api.BlockedStreaming, Severity: api.SeverityWarning, APIServer: "b"},
			{Type: api.BlockedStreaming, Severity: api.SeverityWarning, APIServer: "b"},
		},
		UnmatchedRequests: []api.Request{{User: "u"}},
	}
	got := advice(r, english.Words{Resample: "diagnose --interval 3m30s"})
	tail := ". Fix the client so it keeps draining its watch (a blocked event handler is the usual cause) or restart it: the API server frees the watch only when the request ends, at the client's timeoutSeconds or after 1 to 2 x --min-request-timeout when unset (k8s.io/apiserver endpoints/handlers/get.go:276). With the proposed stall timeout (kubernetes PR 141899) it would have been stopped 30 s after its last send."
	want := []string{
		`a: "bob" (exact match) stopped reading its watch /api/v1/pods during the initial-events replay (2 watch(es), 6 goroutines, 3 APF seat(s) held)` + tail,
		`a: one of "x" | "y" (ambiguous match: the evidence cannot tell which of them is stuck, and the others may be healthy; check each) stopped reading its watch during the initial-events replay (1 watch(es), 1 goroutines, APF seats not known: no request attributed)` + tail,
		`b: "zed" (exact match) stopped reading its watch /api/v1/pods during the initial-events replay (1 watch(es), 3 goroutines, 1 APF seat(s) held)` + tail,
		"a: 1 watch(es) are slow in their initial-events replay but not proven stuck: the samples did not decide: take them more than three minutes apart (diagnose --interval 3m30s, or two captures that far apart), since the runtime may start counting a wait up to two minutes late.",
		"b: 1 watch(es) are slow in their initial-events replay but not proven stuck: take a second sample more than a minute later (`kubectl watch-doctor diagnose` does; offline, pass two captures of the same server to analyze) to tell progress from a stall.",
		"b: 2 streaming watcher(s) blocked sending for a minute or more: upstream closes them when the next event for them cannot be queued; if the resource changes rarely they stay, so check the clients named.",
		"1 executing watch request(s) in the APF dump have no initial-phase watcher: they may be served without the watch cache or be between phases; see unmatchedRequests.",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("advice (-want +got):\n%s", diff)
	}
}

// A relist storm of 50,000 distinct clients on one API server gets a
// sentence for each of the first maxClientAdvice clients and one for the
// rest, their watches, goroutines and seats summed; another server's
// clients are counted on their own. Before, every client had its
// sentence: 32 MB of advice.
func TestStuckAdviceIsBounded(t *testing.T) {
	const storm = 50_000
	r := &api.Report{}
	for i := range storm {
		r.Findings = append(r.Findings, api.Finding{Type: api.StuckInitialEvents, APIServer: "srv-1", GoroutineIDs: []int64{1, 2, 3},
			Client: &api.Client{User: fmt.Sprintf("client-%05d", i), Path: "/api/v1/pods", Seats: 1, Match: api.MatchExact}})
	}
	for i := range 3 {
		r.Findings = append(r.Findings, api.Finding{Type: api.StuckInitialEvents, APIServer: "srv-2", GoroutineIDs: []int64{1},
			Client: &api.Client{User: fmt.Sprintf("other-%d", i), Path: "/api/v1/pods", Seats: 1, Match: api.MatchExact}})
	}
	got := stuckAdvice(r)
	if len(got) != maxClientAdvice+1+3 {
		t.Fatalf("%d sentences, want %d: %d for srv-1 and 3 for srv-2", len(got), maxClientAdvice+4, maxClientAdvice+1)
	}
	if !strings.Contains(got[maxClientAdvice-1], `"client-00019"`) {
		t.Errorf("the last sentence of its own is %q, want client-00019's", got[maxClientAdvice-1])
	}
	rest := fmt.Sprintf("srv-1: %d more client(s) stopped reading their watches during the initial-events replay (%d watch(es), %d goroutines, %d APF seat(s) held)",
		storm-maxClientAdvice, storm-maxClientAdvice, 3*(storm-maxClientAdvice), storm-maxClientAdvice)
	if !strings.HasPrefix(got[maxClientAdvice], rest) {
		t.Errorf("the rest's sentence is\n%q\nwant it to start\n%q", got[maxClientAdvice], rest)
	}
	for _, s := range got[maxClientAdvice+1:] {
		if !strings.HasPrefix(s, "srv-2: \"other-") {
			t.Errorf("srv-2's sentence %q, want one per client", s)
		}
	}
	if n := len(strings.Join(got, "\n")); n > 32<<10 {
		t.Errorf("%d bytes of advice, want at most 32 KiB", n)
	}
}
