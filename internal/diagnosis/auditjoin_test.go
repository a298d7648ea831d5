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
