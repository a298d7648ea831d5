package engine

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/bundle"
	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
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
