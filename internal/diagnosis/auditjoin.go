package diagnosis

import (
	"fmt"
	"slices"
	"time"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/audit"
)

// AuditTolerance is how far an audit event's requestReceivedTimestamp may
// lie from the APF start time of a finding's request for the two to be
// one request. The audit filter stamps the request before API Priority
// and Fairness admits it (k8s.io/apiserver v0.37.2 pkg/server/config.go
// DefaultBuildHandlerChain: WithAudit wraps WithPriorityAndFairness), so
// the stamp precedes the start by the time APF queued it: milliseconds
// for a watch admitted at once, and a request queued longer than this is
// not joined.
const AuditTolerance = 2 * time.Second

// maxAuditFits bounds the events listed for one finding.
const maxAuditFits = 10

// joinAudit writes into each finding whose client names a user, a path
// and a start time the audit events that fit it (same user and path, verb
// watch, received within AuditTolerance of the start): one fills the
// client's source addresses and user agent; several are listed and keep
// the ambiguity. It returns a warning when some finding fit no event.
// Each key's events are sorted by the time received and a finding's
// window found by binary search, so the work is O((F + E) log E), not
// findings times the events of their key (10,000 findings of one
// informer against a million events of its user and path).
func joinAudit(findings []api.Finding, events []audit.Event) []string {
	w, _ := joinAuditWork(findings, events)
	return w
}

// joinAuditWork is joinAudit, also counting the events it looked at
// after sorting (TestJoinAuditIsLinear).
func joinAuditWork(findings []api.Finding, events []audit.Event) (_ []string, work int) {
	if len(events) == 0 {
		return nil, 0
	}
	type key struct{ user, path string }
	byKey := map[key][]int{}
	for i, e := range events {
		k := key{e.User, e.Path}
		byKey[k] = append(byKey[k], i)
	}
	for _, idx := range byKey {
		slices.SortStableFunc(idx, func(a, b int) int { return events[a].RequestReceived.Compare(events[b].RequestReceived) })
	}
	unjoined := 0
	for fi := range findings {
		f := &findings[fi]
		c := f.Client
		if c == nil || c.User == "" || c.Path == "" || c.StartTime == nil {
			continue
		}
		idx := byKey[key{c.User, c.Path}]
		from := c.StartTime.Add(-AuditTolerance)
		first, _ := slices.BinarySearchFunc(idx, from, func(i int, t time.Time) int { return events[i].RequestReceived.Compare(t) })
		var window []int
		for _, i := range idx[first:] {
			work++
			if d := c.StartTime.Sub(events[i].RequestReceived); d < -AuditTolerance || len(window) == maxAuditFits {
				break
			}
			window = append(window, i)
		}
		slices.Sort(window) // in the log's order, as read
		var fits []api.AuditEvent
		for _, i := range window {
			e := events[i]
			fits = append(fits, api.AuditEvent{Source: fmt.Sprintf("%s:%d", e.Source, e.Line), AuditID: e.AuditID, SourceIPs: e.SourceIPs, UserAgent: e.UserAgent, RequestReceivedTimestamp: e.RequestReceived.UTC()})
		}
		f.Audit = fits
		switch len(fits) {
		case 0:
			unjoined++
		case 1:
			c.SourceIPs, c.UserAgent = fits[0].SourceIPs, fits[0].UserAgent
			f.Evidence = append(f.Evidence, fmt.Sprintf("audit log %s: watch of %s received %s from %v, user agent %q", fits[0].Source, c.User, fits[0].RequestReceivedTimestamp.Format("15:04:05.000"), fits[0].SourceIPs, fits[0].UserAgent))
		default:
			f.Evidence = append(f.Evidence, fmt.Sprintf("audit log: %d watch requests of %s on %s were received within %s of its start: which one is this watch is ambiguous (see audit)", len(fits), c.User, c.Path, AuditTolerance))
		}
	}
	if unjoined == 0 {
		return nil, work
	}
	return []string{fmt.Sprintf("audit log: %d of the findings naming a request fit none of its %d watch requests (same user and path, received within %s of the APF start): the log may be of another API server or period", unjoined, len(events), AuditTolerance)}, work
}
