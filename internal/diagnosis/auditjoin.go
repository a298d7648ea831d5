package diagnosis

import (
	"fmt"
	"net/netip"
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

// auditIndex holds the watch requests of the audit logs per user and
// path, each list sorted by received time: a request's fits are found by
// a binary search and a walk of its window, so the join's work grows with
// the events and the requests joined, never with their product.
type auditIndex struct {
	events []audit.Event
	// byKey are the indexes of each key's events, sorted by the time
	// received.
	byKey map[auditKey][]int
	// work counts the events indexed and walked, and the searches: what
	// TestJoinAuditIsLinear holds to the input's size.
	work int
}

type auditKey struct{ user, path string }

func newAuditIndex(events []audit.Event) *auditIndex {
	ix := &auditIndex{events: events, byKey: map[auditKey][]int{}}
	for i, e := range events {
		k := auditKey{e.User, e.Path}
		ix.byKey[k] = append(ix.byKey[k], i)
		ix.work++
	}
	for _, idx := range ix.byKey {
		slices.SortStableFunc(idx, func(a, b int) int { return events[a].RequestReceived.Compare(events[b].RequestReceived) })
	}
	return ix
}

// fits lists the events of user and path received within AuditTolerance
// of start, at most maxAuditFits, in the log's order.
func (ix *auditIndex) fits(user, path string, start time.Time) []api.AuditEvent {
	idx := ix.byKey[auditKey{user, path}]
	ix.work++
	first, _ := slices.BinarySearchFunc(idx, start.Add(-AuditTolerance), func(i int, t time.Time) int { return ix.events[i].RequestReceived.Compare(t) })
	var window []int
	for _, i := range idx[first:] {
		ix.work++
		if ix.events[i].RequestReceived.After(start.Add(AuditTolerance)) || len(window) == maxAuditFits {
			break
		}
		window = append(window, i)
	}
	slices.Sort(window)
	out := make([]api.AuditEvent, len(window))
	for j, i := range window {
		e := &ix.events[i]
		out[j] = api.AuditEvent{Source: fmt.Sprintf("%s:%d", e.Source, e.Line), AuditID: e.AuditID, SourceIPs: e.SourceIPs, UserAgent: e.UserAgent, RequestReceivedTimestamp: e.RequestReceived.UTC()}
	}
	return out
}

// joinAudit writes into each finding whose client names a user, a path
// and a start time the audit events that fit it (same user and path, verb
// watch, received within AuditTolerance of the start): one fills the
// client's source addresses and user agent; several are listed and keep
// the ambiguity. Each candidate of an ambiguous finding is joined the
// same way, on its own. It returns a warning when some request fit no
// event, and the work done.
func joinAudit(findings []api.Finding, events []audit.Event) ([]string, int) {
	if len(events) == 0 {
		return nil, 0
	}
	ix := newAuditIndex(events)
	unjoined, asked := 0, 0
	for fi := range findings {
		f := &findings[fi]
		if c := f.Client; c != nil && c.User != "" && c.Path != "" && c.StartTime != nil {
			asked++
			fits := ix.fits(c.User, c.Path, *c.StartTime)
			f.Audit = fits
			switch len(fits) {
			case 0:
				unjoined++
			case 1:
				var bad []string
				c.SourceIPs, bad = sourceAddrs(fits[0].SourceIPs)
				c.UserAgent = fits[0].UserAgent
				f.Evidence = append(f.Evidence, fmt.Sprintf("audit log %s: watch of %s received %s from %v, user agent %q", fits[0].Source, c.User, fits[0].RequestReceivedTimestamp.Format("15:04:05.000"), c.SourceIPs, fits[0].UserAgent))
				f.Evidence = append(f.Evidence, invalidAddrs(fits[0].Source, bad)...)
			default:
				f.Evidence = append(f.Evidence, fmt.Sprintf("audit log: %d watch requests of %s on %s were received within %s of its start: which one is this watch is ambiguous (see audit)", len(fits), c.User, c.Path, AuditTolerance))
			}
		}
		for ci := range f.Candidates {
			cand := &f.Candidates[ci]
			if cand.User == "" || cand.Path == "" || cand.StartTime.IsZero() {
				continue
			}
			asked++
			fits := ix.fits(cand.User, cand.Path, cand.StartTime)
			switch len(fits) {
			case 0:
				unjoined++
			case 1:
				var bad []string
				cand.SourceIPs, bad = sourceAddrs(fits[0].SourceIPs)
				cand.UserAgent = fits[0].UserAgent
				f.Evidence = append(f.Evidence, fmt.Sprintf("audit log %s: candidate %s's watch started %s was received from %v, user agent %q", fits[0].Source, cand.User, cand.StartTime.Format("15:04:05.000"), cand.SourceIPs, fits[0].UserAgent))
				f.Evidence = append(f.Evidence, invalidAddrs(fits[0].Source, bad)...)
			default:
				f.Evidence = append(f.Evidence, fmt.Sprintf("audit log: %d watch requests of candidate %s on %s were received within %s of its start: its source is ambiguous", len(fits), cand.User, cand.Path, AuditTolerance))
			}
		}
	}
	if unjoined == 0 {
		return nil, ix.work
	}
	return []string{fmt.Sprintf("audit log: %d of the %d requests of the findings (clients and candidates) fit none of its %d watch requests of their users and paths (received within %s of the APF start): the log may be of another API server or period", unjoined, asked, len(events), AuditTolerance)}, ix.work
}

// sourceAddrs parses an event's source addresses (net/netip): the valid
// ones, as the parser writes them, and the rest, which are never looked
// up.
func sourceAddrs(ips []string) (valid, invalid []string) {
	for _, s := range ips {
		a, err := netip.ParseAddr(s)
		if err != nil {
			invalid = append(invalid, s)
			continue
		}
		valid = append(valid, a.String())
	}
	return valid, invalid
}

// invalidAddrs says, escaped, which source addresses of an event are not
// addresses.
func invalidAddrs(source string, bad []string) []string {
	var out []string
	for _, s := range bad {
		out = append(out, fmt.Sprintf("audit log %s: source address %q is not an IP address: shown as given, not looked up", source, s))
	}
	return out
}
