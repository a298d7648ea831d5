package engine

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/bundle"
	"github.com/watch-doctor/watch-doctor/internal/diagnosis"
	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/pkg/audit"
)

// auditEvent is one audit.k8s.io/v1 Event line of a watch of
// /api/v1/namespaces/rand2/pods, as the seed workload's clients made it.
func auditEvent(id, user, ip, received string) string {
	return `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"` + id + `","stage":"ResponseStarted","requestURI":"/api/v1/namespaces/rand2/pods?watch=true","verb":"watch","user":{"username":"` + user +
		`"},"sourceIPs":["` + ip + `"],"userAgent":"` + user + `/v0.37.2","requestReceivedTimestamp":"` + received + `"}` + "\n"
}

// growingLog is an audit log written to while the run samples: its
// content when opened, and how often it was.
type growingLog struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	opened int
}

func (g *growingLog) write(s string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.buf.WriteString(s)
}

func (g *growingLog) source() bundle.AuditSource {
	return bundle.AuditSource{Name: "audit.log", Open: func() (io.ReadCloser, error) {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.opened++
		return io.NopCloser(strings.NewReader(g.buf.String())), nil
	}}
}

// The audit log is read once, after the last sample: a request the log
// got between the samples is joined (issue 37: the newest request was
// missed, the log having been read before it existed).
func TestAuditLogReadAfterTheLastSample(t *testing.T) {
	s := fakeapiserver.Start(t, golden.Fixture("t1"), golden.Fixture("t2"))
	s.NoProfiling = true
	s.Started = make(chan string)
	log := &growingLog{}
	log.write(auditEvent("a1", "slow-informer", "127.0.0.2", "2026-11-29T10:22:03.339100Z"))
	done := make(chan struct{})
	go func() {
		defer close(done)
		metrics := 0
		for p := range s.Started {
			// The second sample starts with /metrics: the log grows
			// before it is answered.
			if strings.HasPrefix(p, "/metrics") {
				if metrics++; metrics == 2 {
					log.write(auditEvent("a2", "paced-reader", "127.0.0.3", "2026-11-29T10:22:03.308800Z"))
				}
			}
		}
	}()
	cfg := Config{Live: liveConfig(t, s, true), AuditLogs: []bundle.AuditSource{log.source()}}
	res, err := Run(context.Background(), cfg)
	close(s.Started)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, f := range res.Report.Findings {
		if f.Client != nil {
			got[f.Client.User] = f.Client.SourceIPs
		}
	}
	if diff := cmp.Diff(map[string][]string{"slow-informer": {"127.0.0.2"}, "paced-reader": {"127.0.0.3"}}, got); diff != "" {
		t.Errorf("source IPs (-want +got):\n%s", diff)
	}
	if log.opened != 1 {
		t.Errorf("the log was opened %d times, want once (stdin can be read once)", log.opened)
	}
}

// A log that joined nothing is said; its skipped lines are a note with
// their count and the first ones.
func TestAuditLogNotes(t *testing.T) {
	loaded := func(t *testing.T) *bundle.Loaded {
		l, err := bundle.Load([]string{golden.Fixture("t2", "apf-requests.txt"), golden.Fixture("t2", "metrics.txt"), golden.Fixture("t2", "captured-at.txt")}, bundle.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	for _, tc := range []struct {
		name, log string
		want      []string
	}{
		{"another cluster's", auditEvent("x", "someone-else", "10.1.1.1", "2026-11-29T10:22:03Z"),
			[]string{`audit log "audit.log": 1 watch requests read, none of a user and path of the APF dumps' watch requests: nothing to join`}},
		{"skipped lines", "not an event\n" + auditEvent("a1", "slow-informer", "127.0.0.2", "2026-11-29T10:22:03.339100Z") + "{}\n",
			[]string{`audit log "audit.log" (kube-apiserver JSON lines`, `: 2 of 3 records skipped (line 1: not a JSON object; line 3: `}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &growingLog{}
			g.write(tc.log)
			res, err := Run(context.Background(), Config{Loaded: loaded(t), AuditLogs: []bundle.AuditSource{g.source()}})
			if err != nil {
				t.Fatal(err)
			}
			w := strings.Join(res.Report.Warnings, "\n")
			for _, s := range tc.want {
				if !strings.Contains(w, s) {
					t.Errorf("warnings lack %q:\n%s", s, w)
				}
			}
		})
	}
}

// Beside the watch requests of the APF dumps' users and paths, readAudit
// keeps those that ended early (in under half their timeoutSeconds) in
// the samples' window, whoever made them: the evidence of the watches the
// server closed where no APF dump lists the client. A watch that ran its
// course, or ended early outside the window, is not kept; past 10,000
// the rest are counted in a note (diagnosis.AuditNeed).
func TestReadAuditKeepsEarlyEndsInTheSpan(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 18, 0, 0, 0, time.UTC)
	const path = "/api/v1/namespaces/relist/configmaps"
	watch := func(user string, received time.Time, lasted time.Duration) audit.Event {
		return audit.Event{AuditID: user, User: user, Verb: "watch", RequestURI: path + "?timeoutSeconds=3600&watch=true",
			RequestReceived: received, Completed: received.Add(lasted)}
	}
	read := func(t *testing.T, events []audit.Event, keyed ...audit.Event) *auditRead {
		t.Helper()
		var b bytes.Buffer
		if err := audit.Write(&b, events); err != nil {
			t.Fatal(err)
		}
		need := diagnosis.NewAuditNeed()
		need.Sample(t0)
		need.Sample(t0.Add(2 * time.Minute))
		for _, e := range keyed {
			need.Request(e.User, path, e.RequestReceived)
		}
		src := bundle.AuditSource{Name: "audit.log", Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b.Bytes())), nil }}
		r, err := readAudit(context.Background(), []bundle.AuditSource{src}, need)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	keyed := watch("keyed", t0.Add(-time.Hour), 59*time.Minute) // of the APF dumps: kept
	r := read(t, []audit.Event{
		watch("slow", t0.Add(10*time.Second), 14*time.Second), // early, in the window: kept
		watch("fast", t0.Add(-time.Hour), 59*time.Minute),     // ran its course: not kept
		watch("before", t0.Add(-time.Hour), 14*time.Second),   // early, before the window
		keyed,
		watch("after", t0.Add(3*time.Minute), 14*time.Second),                                                                                // early, after the window
		{AuditID: "open", User: "open", Verb: "watch", RequestURI: "/api/v1/configmaps?timeoutSeconds=3600&watch=true", RequestReceived: t0}, // not ended
	}, keyed)
	var users []string
	for _, e := range r.events {
		users = append(users, e.User)
	}
	if diff := cmp.Diff([]string{"slow", "keyed"}, users); diff != "" {
		t.Errorf("events kept (-want +got):\n%s", diff)
	}

	many := make([]audit.Event, 10000+3)
	for i := range many {
		many[i] = watch("slow", t0.Add(10*time.Second), 14*time.Second)
		many[i].AuditID = fmt.Sprintf("slow-%d", i) // one request each
	}
	r = read(t, many)
	if len(r.events) != 10000 {
		t.Errorf("%d kept: want 10000", len(r.events))
	}
	if !slices.ContainsFunc(r.notes, func(n string) bool {
		return strings.Contains(n, "3 more watch requests of users no APF dump lists may have ended early in the samples' window than the 10000 read")
	}) {
		t.Errorf("notes %q do not count the early ends not kept", r.notes)
	}
}
