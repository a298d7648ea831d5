package diagnosis

import (
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
			w := joinAudit(fs, tt.events)
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

// The join's work grows with findings plus events, not their product: n
// findings of one user and path against 50n events of them, then twice
// as many of each; the events looked at after sorting must not more than
// double (before, each finding looked at every event of its key: 2,000
// findings x 100,000 events).
func TestJoinAuditIsLinear(t *testing.T) {
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
		_, work = joinAuditWork(fs, events)
		for _, f := range fs {
			fits += len(f.Audit)
		}
		return work, fits
	}
	w1, f1 := cost(2000)
	w2, f2 := cost(4000)
	if w2 > 2*w1 || w1 > 2000*(maxAuditFits+1) {
		t.Errorf("findings 2000 -> 4000: events looked at %d -> %d: more than doubled, or more than %d a finding (quadratic)", w1, w2, maxAuditFits+1)
	}
	if f1 != 2000*maxAuditFits || f2 != 4000*maxAuditFits {
		t.Errorf("fits %d and %d: want %d and %d, each finding's window capped at %d", f1, f2, 2000*maxAuditFits, 4000*maxAuditFits, maxAuditFits)
	}
}
