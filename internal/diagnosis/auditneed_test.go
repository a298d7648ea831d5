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

// feed passes events through need as a read does: the filter at the
// first record, Add once merged.
func feed(need *AuditNeed, events []audit.Event) {
	keep := need.Filter()
	for i := range events {
		if keep(&events[i]) {
			need.Add(&events[i])
		}
	}
}

// AuditNeed keeps the requests of the dumps' users and paths received
// near one of their starts, and those that may have ended early in the
// samples' window; nothing else.
func TestAuditNeedKeeps(t *testing.T) {
	path := "/api/v1/namespaces/ns/configmaps"
	start := t0.Add(10 * time.Minute)
	ev := func(id, user string, received, completed time.Time, timeout int) audit.Event {
		return audit.Event{AuditID: id, User: user, Verb: "watch", Path: path, RequestReceived: received, Completed: completed, TimeoutSeconds: timeout}
	}
	events := []audit.Event{
		ev("near", "u", start.Add(-5*time.Millisecond), time.Time{}, 600),
		ev("near-late", "u", start.Add(AuditTolerance), time.Time{}, 600),
		ev("far", "u", start.Add(-time.Hour), start.Add(-time.Hour+time.Minute), 600),
		ev("other-user", "v", start, time.Time{}, 600),
		ev("early", "u", start.Add(time.Minute), start.Add(2*time.Minute), 600),
		ev("long", "u", start.Add(time.Minute), start.Add(time.Minute+6*time.Minute), 600),
		ev("no-time", "u", time.Time{}, time.Time{}, 600),
	}
	need := NewAuditNeed()
	need.Request("u", path, start)
	need.Request("u", path, start) // the same row in a second sample
	need.Sample(start.Add(30 * time.Second))
	need.Sample(start.Add(3 * time.Minute))
	feed(need, events)
	var got []string
	for _, e := range need.Events() {
		got = append(got, e.AuditID)
	}
	if diff := cmp.Diff([]string{"near", "near-late", "early"}, got); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
	if need.Read() != 6 {
		t.Errorf("read %d requests of the dumps' users and paths, want 6", need.Read())
	}
	if n := need.Notes(); n != nil {
		t.Errorf("notes %q, want none", n)
	}
}

// The join on what AuditNeed kept is the join on the whole log: each
// finding's fits are the same, whatever else the log holds.
func TestAuditNeedJoinsAsTheWholeLog(t *testing.T) {
	path := "/api/v1/namespaces/ns/pods"
	var events []audit.Event
	for i := range 3000 {
		// Every 50 ms, three users, and bursts around the starts.
		events = append(events, audit.Event{Source: "a.log", Line: i + 1, AuditID: fmt.Sprint(i), User: fmt.Sprintf("u%d", i%3), Verb: "watch", Path: path,
			SourceIPs: []string{fmt.Sprintf("10.0.%d.%d", i/250, i%250)}, RequestReceived: t0.Add(time.Duration(i) * 50 * time.Millisecond)})
	}
	findings := func() []api.Finding {
		var fs []api.Finding
		for i := range 20 {
			st := t0.Add(time.Duration(i) * 7 * time.Second)
			fs = append(fs, api.Finding{Type: api.StuckInitialEvents, Client: &api.Client{User: fmt.Sprintf("u%d", i%3), Path: path, StartTime: &st, Match: api.MatchExact}})
		}
		return fs
	}
	whole := findings()
	joinAudit(whole, events)
	need := NewAuditNeed()
	for _, f := range whole {
		need.Request(f.Client.User, f.Client.Path, *f.Client.StartTime)
	}
	feed(need, events)
	kept := findings()
	joinAudit(kept, need.Events())
	if diff := cmp.Diff(whole, kept); diff != "" {
		t.Errorf("joined on what was kept (-whole +kept):\n%s", diff)
	}
	if n := len(need.Events()); n >= len(events)/2 {
		t.Errorf("kept %d of %d events", n, len(events))
	}
}

// A user and path with more requests near its starts than the join keeps
// keeps none of them, and says so: a window cut short would make an
// ambiguous join look exact.
func TestAuditNeedBound(t *testing.T) {
	path := "/api/v1/pods"
	need := NewAuditNeed()
	need.Request("storm", path, t0)
	need.Request("calm", path, t0)
	var events []audit.Event
	for i := range 2 * (maxAuditFits + 1 + maxEarlyPerKey) {
		events = append(events, audit.Event{AuditID: fmt.Sprint(i), User: "storm", Verb: "watch", Path: path, RequestReceived: t0.Add(time.Duration(i%1000) * time.Millisecond)})
	}
	events = append(events, audit.Event{AuditID: "calm", User: "calm", Verb: "watch", Path: path, RequestReceived: t0})
	feed(need, events)
	got := need.Events()
	if len(got) != 1 || got[0].AuditID != "calm" {
		t.Errorf("kept %d events (%+v), want calm's alone", len(got), got[:min(len(got), 2)])
	}
	notes := strings.Join(need.Notes(), "\n")
	if !strings.Contains(notes, "storm on /api/v1/pods") || strings.Contains(notes, "calm") {
		t.Errorf("notes %q, want storm's alone", notes)
	}
}
