package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// TestCandidateLines: each ambiguous finding's candidates are named on a
// line of their own, a finding that is not ambiguous has none.
func TestCandidateLines(t *testing.T) {
	at := time.Date(2026, 12, 3, 1, 2, 3, 400e6, time.UTC)
	cands := []api.Request{{User: "x", Verb: "watch", Path: "/api/v1/pods", StartTime: at}, {User: "y", Verb: "watch", Path: "/api/v1/pods", StartTime: at}}
	findings := []api.Finding{
		{Type: api.StuckInitialEvents, Watcher: api.Watcher{GoroutineID: 9}, Client: &api.Client{Match: api.MatchAmbiguous}, Candidates: cands},
		{Type: api.StuckInitialEvents, Watcher: api.Watcher{GoroutineID: 10}, Client: &api.Client{User: "z", Match: api.MatchExact}},
	}
	var b bytes.Buffer
	tx := newText(&b, Options{})
	candidateLines(tx, findings, nil)
	want := "  StuckInitialEvents goroutine 9: one of these is its request: x (watch /api/v1/pods, started 01:02:03.400); y (watch /api/v1/pods, started 01:02:03.400)\n"
	if got := b.String(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if !strings.Contains(candidateList(findings[0], false), "x (watch") {
		t.Errorf("candidateList: %q", candidateList(findings[0], false))
	}
}

// Each candidate shows its audit join: in the table its first pod (or
// its first address), escaped; -o wide every address, its user agent and
// every pod with its owner.
func TestCandidateSource(t *testing.T) {
	p := func(name, owner string) api.Pod {
		return api.Pod{Namespace: "ns", Name: name, IP: "10.0.0.1", Owner: owner}
	}
	for _, tc := range []struct {
		name        string
		c           api.Request
		table, wide string
	}{
		{"nothing", api.Request{}, "", ""},
		{"an address", api.Request{SourceIPs: []string{"10.0.0.1", "::1"}, UserAgent: "ua\x1b[2J"}, ", from 10.0.0.1", `, from 10.0.0.1 ::1, user agent ua\x1b[2J`},
		{"pods", api.Request{SourceIPs: []string{"10.0.0.1"}, Pods: []api.Pod{p("a", "ReplicaSet/r"), p("b", "")}}, ", pod ns/a +1", ", from 10.0.0.1, pods ns/a (ReplicaSet/r) ns/b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := candidateSource(tc.c, false); got != tc.table {
				t.Errorf("table: got %q, want %q", got, tc.table)
			}
			if got := candidateSource(tc.c, true); got != tc.wide {
				t.Errorf("wide: got %q, want %q", got, tc.wide)
			}
		})
	}
}
