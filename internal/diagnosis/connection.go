package diagnosis

import (
	"fmt"
	"sort"
	"strings"

	"github.com/watch-doctor/watch-doctor/internal/watches"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// maxMatesListed is how many attributed connection-mates a finding names
// one by one; beyond it the finding gets one summary line. A real server
// caps the streams of an HTTP/2 connection (100 by default), but a
// hostile or synthetic dump may put every handler on one connection, and
// a line per mate would make the report quadratic in the findings.
const maxMatesListed = 10

// connectionEvidence describes the connection groups of one API server's
// findings: handlers served over one connection (one HTTP/2 serverConn or
// one HTTP/1.1 conn) come from one client process, or from a proxy in
// front of the API server. When a finding on a connection is attributed
// (exact or likely), its connection-mates get a line saying so; nothing
// else is inferred: one process may use several credentials, and a proxy
// carries many clients.
//
// Cost: O(n log n) time in the n findings and O(n) evidence lines,
// whatever their grouping: each finding gets its connection line and at
// most maxMatesListed mate lines (a summary line past that), so a
// connection carrying all n findings costs no more than n connections
// carrying one each. It returns its work, counted as findings visited
// (mates named included), for the test that keeps it so.
func connectionEvidence(findings []*api.Finding) (work int) {
	groups := map[int64][]*api.Finding{}
	var conns []int64
	for _, f := range findings {
		if f.Connection == 0 {
			continue
		}
		if _, ok := groups[f.Connection]; !ok {
			conns = append(conns, f.Connection)
		}
		groups[f.Connection] = append(groups[f.Connection], f)
	}
	for _, conn := range conns {
		work += connectionGroup(conn, groups[conn])
	}
	return work
}

// connectionGroup adds the evidence of the findings fs served over the
// connection goroutine conn, in O(len(fs) log len(fs)), and returns its
// work as connectionEvidence counts it.
func connectionGroup(conn int64, fs []*api.Finding) (work int) {
	var mates []*api.Finding // attributed exact or likely, in findings order
	for _, f := range fs {
		work++
		if attributed(f) {
			mates = append(mates, f)
		}
	}
	sum := newMateSummary(mates)
	lines := interner{}
	for _, f := range fs {
		work++
		h := f.Watcher.Handler
		if h == nil {
			continue
		}
		f.Evidence = append(f.Evidence, lines.intern(connectionLine(conn, h, len(fs))))
		self := attributed(f)
		others := len(mates)
		if self {
			others--
		}
		if others > maxMatesListed {
			f.Evidence = append(f.Evidence, lines.intern(sum.line(f, self)))
			work++
			continue
		}
		for _, o := range mates {
			work++
			if o == f {
				continue
			}
			f.Evidence = append(f.Evidence, fmt.Sprintf("shares that connection with watcher goroutine %d, attributed %s to %s: the same client process (or a proxy in front of the API server)", o.Watcher.GoroutineID, o.Client.Match, o.Client.User))
		}
	}
	return work
}

// connectionLine says what connection goroutine conn is and how many
// watch requests it carries, inReport of them in this report.
func connectionLine(conn int64, h *api.Handler, inReport int) string {
	addr := ""
	if h.ConnAddress != "" {
		addr = " " + h.ConnAddress
	}
	kind := "HTTP/2 connection"
	switch h.Transport {
	case watches.TransportHTTP11:
		kind = "HTTP/1.1 connection"
	case watches.TransportWebsockets:
		kind = "websocket connection"
	}
	line := fmt.Sprintf("%s%s (goroutine %d) carries only this watch request", kind, addr, conn)
	if n := max(h.ConnWatches, inReport); n > 1 {
		line = fmt.Sprintf("%s%s (goroutine %d) carries %d watch requests, %d in this report", kind, addr, conn, n, inReport)
	}
	if h.Transport == watches.TransportHTTP11 {
		line += "; net/http serves one request at a time on an HTTP/1.1 connection"
	}
	return line
}

func attributed(f *api.Finding) bool {
	return f.Client != nil && (f.Client.Match == api.MatchExact || f.Client.Match == api.MatchLikely)
}

// mateSummary is what the summary line of a crowded connection says: the
// attributed findings on it and their users, counted once per connection
// so that each finding's line costs O(1).
type mateSummary struct {
	n      int
	users  []string       // distinct, sorted
	byUser map[string]int // attributed findings per user
}

// maxUsersNamed is how many users a summary line names.
const maxUsersNamed = 3

func newMateSummary(mates []*api.Finding) mateSummary {
	s := mateSummary{n: len(mates), byUser: map[string]int{}}
	for _, o := range mates {
		if s.byUser[o.Client.User] == 0 {
			s.users = append(s.users, o.Client.User)
		}
		s.byUser[o.Client.User]++
	}
	sort.Strings(s.users)
	return s
}

// line summarises the mates of f (self: f is one of them) without naming
// each: how many, of how many users, the first users by name.
func (s mateSummary) line(f *api.Finding, self bool) string {
	n, users, skip := s.n, len(s.users), false
	if self {
		n--
		if s.byUser[f.Client.User] == 1 {
			skip = true
			users--
		}
	}
	var named []string
	for _, u := range s.users {
		if len(named) == maxUsersNamed {
			break
		}
		if skip && u == f.Client.User {
			continue
		}
		named = append(named, fmt.Sprintf("%q", u))
	}
	more := ""
	if users > len(named) {
		more = fmt.Sprintf(" and %d more", users-len(named))
	}
	return fmt.Sprintf("shares that connection with %d other watchers attributed exact or likely, to %d users (%s%s): the same client process (or a proxy in front of the API server); too many to list one by one", n, users, strings.Join(named, ", "), more)
}
