package diagnosis

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/audit"
)

// A finding's request is joined to the audit events of the same user and
// path received within AuditTolerance of its start: one names the source
// and user agent, several are listed and name neither, none warns.
func TestJoinAudit(t *testing.T) {
	start := t0.Add(time.Second)
	path := "/api/v1/namespaces/ns/pods"
	ev := func(user, ip string, received time.Time) audit.Event {
		return audit.Event{Source: "a.log", Line: 3, AuditID: "id-" + ip, User: user, Verb: "watch", Path: path, SourceIPs: []string{ip}, UserAgent: "ua-" + ip, RequestReceived: received}
	}
	finding := func() []api.Finding {
		st := start
		return []api.Finding{{Type: api.StuckInitialEvents, Client: &api.Client{User: "u", Path: path, StartTime: &st, Match: api.MatchExact}}}
	}
	tests := []struct {
		name     string
		events   []audit.Event
		ips      []string
		fits     int
		warnings int
	}{
		{"one fits", []audit.Event{ev("u", "127.0.0.2", start.Add(-5*time.Millisecond)), ev("other", "127.0.0.3", start)}, []string{"127.0.0.2"}, 1, 0},
		{"two fit: ambiguous", []audit.Event{ev("u", "127.0.0.2", start), ev("u", "127.0.0.3", start.Add(-time.Second))}, nil, 2, 0},
		{"too early", []audit.Event{ev("u", "127.0.0.2", start.Add(-AuditTolerance-time.Millisecond))}, nil, 0, 1},
		{"another path", []audit.Event{{User: "u", Verb: "watch", Path: "/api/v1/configmaps", RequestReceived: start}}, nil, 0, 1},
		{"no log", nil, nil, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := finding()
			w, _ := joinAudit(fs, tt.events)
			if diff := cmp.Diff(tt.ips, fs[0].Client.SourceIPs); diff != "" {
				t.Errorf("source IPs (-want +got):\n%s", diff)
			}
			if len(fs[0].Audit) != tt.fits || len(w) != tt.warnings {
				t.Errorf("%d events fit, warnings %q; want %d, %d", len(fs[0].Audit), w, tt.fits, tt.warnings)
			}
			if tt.fits == 1 && (fs[0].Client.UserAgent != "ua-127.0.0.2" || fs[0].Audit[0].Source != "a.log:3") {
				t.Errorf("client %+v, audit %+v", fs[0].Client, fs[0].Audit)
			}
		})
	}
}

// Each candidate of an ambiguous finding is joined on its own: its source
// address and user agent when one event fits it, nothing when several do.
// An address that is not one is said, escaped, and kept out of SourceIPs.
func TestJoinAuditCandidates(t *testing.T) {
	path := "/api/v1/namespaces/ns/configmaps"
	st := func(d time.Duration) time.Time { return t0.Add(d) }
	ev := func(user, ip string, received time.Time) audit.Event {
		return audit.Event{Source: "a.log", Line: 7, User: user, Verb: "watch", Path: path, SourceIPs: []string{ip}, UserAgent: "ua-" + user, RequestReceived: received}
	}
	fs := []api.Finding{{Type: api.StuckInitialEvents, Client: &api.Client{Path: path, Match: api.MatchAmbiguous}, Candidates: []api.Request{
		{User: "a", Path: path, StartTime: st(0)},
		{User: "b", Path: path, StartTime: st(10 * time.Second)},
		{User: "c", Path: path, StartTime: st(20 * time.Second)},
		{User: "d", Path: path, StartTime: st(30 * time.Second)},
	}}}
	events := []audit.Event{
		ev("a", "10.0.0.1", st(-time.Millisecond)),
		ev("b", "::ffff:10.0.0.2", st(10*time.Second)),
		ev("c", "10.0.0.3", st(20*time.Second)), ev("c", "10.0.0.4", st(20*time.Second+time.Millisecond)),
		ev("d", "not-an-ip\x1b[31m", st(30*time.Second)),
	}
	w, _ := joinAudit(fs, events)
	type got struct {
		IPs []string
		UA  string
	}
	var gots []got
	for _, c := range fs[0].Candidates {
		gots = append(gots, got{c.SourceIPs, c.UserAgent})
	}
	want := []got{{[]string{"10.0.0.1"}, "ua-a"}, {[]string{"::ffff:10.0.0.2"}, "ua-b"}, {nil, ""}, {nil, "ua-d"}}
	if diff := cmp.Diff(want, gots); diff != "" {
		t.Errorf("candidates' joins (-want +got):\n%s", diff)
	}
	ev2 := strings.Join(fs[0].Evidence, "\n")
	for _, s := range []string{
		"audit log a.log:7: candidate a's watch started 10:00:00.000 was received from [10.0.0.1], user agent \"ua-a\"",
		"audit log: 2 watch requests of candidate c on " + path + " were received within 2s of its start: its source is ambiguous",
		`audit log a.log:7: source address "not-an-ip\x1b[31m" is not an IP address: shown as given, not looked up`,
	} {
		if !strings.Contains(ev2, s) {
			t.Errorf("evidence lacks %q:\n%s", s, ev2)
		}
	}
	if strings.Contains(ev2, "\x1b") {
		t.Errorf("evidence holds an escape byte unescaped:\n%q", ev2)
	}
	if len(w) != 0 {
		t.Errorf("warnings %q: every candidate fit an event", w)
	}
}

// The join's work grows linearly with the events and the requests joined,
// even when every request and event share one user and path (a relist
// loop): it searches each request's window instead of walking every event
// of its key.
func TestJoinAuditIsLinear(t *testing.T) {
	path := "/api/v1/configmaps"
	input := func(n int) ([]api.Finding, []audit.Event) {
		fs := make([]api.Finding, n)
		events := make([]audit.Event, n)
		for i := range n {
			start := t0.Add(time.Duration(i) * time.Second)
			fs[i] = api.Finding{Client: &api.Client{User: "loop", Path: path, StartTime: &start}}
			events[i] = audit.Event{Source: "a.log", Line: i + 1, User: "loop", Verb: "watch", Path: path, SourceIPs: []string{fmt.Sprintf("10.0.%d.%d", i/250, i%250)}, RequestReceived: start}
		}
		return fs, events
	}
	const n = 2000
	_, w1 := joinAudit(input(n))
	_, w2 := joinAudit(input(2 * n))
	// The window of the first and last requests is cut short: a few
	// units of slack, where a quadratic join would take four times.
	if float64(w2) > 2.01*float64(w1) {
		t.Errorf("requests and events %d -> %d: work %d -> %d: more than doubled (quadratic)", n, 2*n, w1, w2)
	}
	if w1 > 10*n {
		t.Errorf("%d requests and events: work %d, want at most %d", n, w1, 10*n)
	}
}

// n findings of one user and path against 50n events of them, then twice
// as many of each: each finding's window is capped, and the work at most
// doubles (before, each finding looked at every event of its key).
func TestJoinAuditIsLinearAgainstManyEvents(t *testing.T) {
	path := "/api/v1/namespaces/ns/pods"
	cost := func(n int) (work, fits int) {
		events := make([]audit.Event, 50*n)
		for i := range events {
			events[i] = audit.Event{Source: "a.log", Line: i + 1, User: "u", Verb: "watch", Path: path, RequestReceived: t0.Add(time.Duration(i) * 100 * time.Millisecond)}
		}
		fs := make([]api.Finding, n)
		for i := range fs {
			st := t0.Add(time.Duration(i) * 5 * time.Second)
			fs[i] = api.Finding{Type: api.StuckInitialEvents, Client: &api.Client{User: "u", Path: path, StartTime: &st, Match: api.MatchExact}}
		}
		_, work = joinAudit(fs, events)
		for _, f := range fs {
			fits += len(f.Audit)
		}
		return work, fits
	}
	w1, f1 := cost(2000)
	w2, f2 := cost(4000)
	if float64(w2) > 2.01*float64(w1) {
		t.Errorf("findings 2000 -> 4000: work %d -> %d: more than doubled (quadratic)", w1, w2)
	}
	if f1 != 2000*maxAuditFits || f2 != 4000*maxAuditFits {
		t.Errorf("fits %d and %d: want %d and %d, each finding's window capped at %d", f1, f2, 2000*maxAuditFits, 4000*maxAuditFits, maxAuditFits)
	}
}

// "check each" names each candidate's pods, else its source addresses.
func TestCandidatesNamed(t *testing.T) {
	f := api.Finding{Candidates: []api.Request{
		{User: "a", SourceIPs: []string{"10.0.0.1"}, Pods: []api.Pod{{Namespace: "ns", Name: "a-1"}}},
		{User: "a", SourceIPs: []string{"10.0.0.1"}, Pods: []api.Pod{{Namespace: "ns", Name: "a-1"}, {Namespace: "ns", Name: "a-2"}}},
		{User: "b", SourceIPs: []string{"10.0.0.2"}},
		{User: "c"},
	}}
	if got, want := candidatesNamed(f), `"a" (pod ns/a-1, pod ns/a-2) | "b" (from 10.0.0.2) | "c"`; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}
