package diagnosis

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/watch-doctor/watch-doctor/pkg/audit"
)

// maxEarlyPerKey is how many watch requests of one user and path a read
// keeps beyond those near its APF starts: the ones that may have ended
// early in the samples' window (closedaudit.go).
const maxEarlyPerKey = 1024

// maxEarlyEnds bounds the watch requests of users and paths no APF dump
// lists that a read holds at once while it waits for their end, and those
// it keeps for having ended early in the samples' window: the evidence of
// the watches the server closed whose client no APF dump lists
// (WatchClosedByServer from /metrics and the log alone). The rest are
// counted in a note.
const maxEarlyEnds = 10000

// maxOverNamed bounds the users and paths a note names as past their
// bound.
const maxOverNamed = 3

// AuditNeed decides, as an audit log streams by, which of its watch
// requests the diagnosis can use, and keeps those alone: the requests of
// a user and path of the APF dumps received within AuditTolerance of one
// of its starts there (the join, auditjoin.go), and those that may have
// ended early in the samples' window (the closures, closedaudit.go).
// Memory is bounded by the APF evidence, not by the log: a user and path
// keeps at most (maxAuditFits+1) requests per start and maxEarlyPerKey
// more; one past that keeps none, and is said (never named from part of
// its requests: a window cut short could make an ambiguous join look
// exact). The join on what it keeps is the join on the whole log. Not
// safe for concurrent use.
type AuditNeed struct {
	keys map[auditKey]*keyNeed
	// from and to span the samples' times; zero when none has one.
	from, to time.Time
	// read counts the requests of a user and path of the dumps.
	read   int
	events []audit.Event
	// open counts the requests of no key admitted and not yet ended;
	// early those kept for having ended early in the window, and
	// earlyDropped those refused or not kept past maxEarlyEnds.
	open, early, earlyDropped int
}

// keyNeed is what one user and path of the APF dumps needs.
type keyNeed struct {
	// starts are the APF start times, sorted, each once.
	starts   []time.Time
	admitted int
	over     bool
}

// NewAuditNeed returns an AuditNeed of no request: it keeps nothing until
// Request names one.
func NewAuditNeed() *AuditNeed {
	return &AuditNeed{keys: map[auditKey]*keyNeed{}}
}

// Request records a request of the APF dumps: its user (or flow
// distinguisher) and path, and its start (zero while it waits).
func (n *AuditNeed) Request(user, path string, start time.Time) {
	if user == "" || path == "" {
		return
	}
	k := auditKey{user, path}
	kn := n.keys[k]
	if kn == nil {
		kn = &keyNeed{}
		n.keys[k] = kn
	}
	if !start.IsZero() {
		kn.starts = append(kn.starts, start)
	}
}

// Sample records the time of a sample (a capture, a /metrics read).
func (n *AuditNeed) Sample(at time.Time) {
	if at.IsZero() {
		return
	}
	if n.from.IsZero() || at.Before(n.from) {
		n.from = at
	}
	if n.to.IsZero() || at.After(n.to) {
		n.to = at
	}
}

// sorted sorts each key's starts and drops repeats (the same request in
// several samples); called once every Request was recorded.
func (n *AuditNeed) sorted() {
	for _, kn := range n.keys {
		if !slices.IsSortedFunc(kn.starts, time.Time.Compare) {
			slices.SortFunc(kn.starts, time.Time.Compare)
		}
		kn.starts = slices.CompactFunc(kn.starts, time.Time.Equal)
	}
}

// Filter is the audit.Filter of a read: it admits a request, at its first
// record, when its user and path are the dumps' and it is received near
// one of their starts or may end early in the window; each user and path
// admits at most its bound.
func (n *AuditNeed) Filter() audit.Filter {
	n.sorted()
	return func(e *audit.Event) bool {
		kn := n.keys[auditKey{e.User, e.Path}]
		if kn == nil {
			return n.admitUnkeyed(e)
		}
		n.read++
		if kn.over || !(kn.near(e.RequestReceived) || n.mayEndEarly(e)) {
			return false
		}
		if kn.admitted++; kn.admitted > (maxAuditFits+1)*len(kn.starts)+maxEarlyPerKey {
			kn.over = true
			return false
		}
		return true
	}
}

// near reports whether t is within AuditTolerance of one of the starts,
// or unknown (a later record may give it).
func (kn *keyNeed) near(t time.Time) bool {
	if t.IsZero() {
		return true
	}
	i, _ := slices.BinarySearchFunc(kn.starts, t.Add(-AuditTolerance), time.Time.Compare)
	return i < len(kn.starts) && !kn.starts[i].After(t.Add(AuditTolerance))
}

// mayEndEarly reports whether a request first seen as e may turn out to
// have ended early in the window (endedEarly): it has a timeout, and was
// received after the window's start less half of it.
func (n *AuditNeed) mayEndEarly(e *audit.Event) bool {
	if n.from.IsZero() || e.TimeoutSeconds <= 0 {
		return false
	}
	return e.RequestReceived.IsZero() || e.RequestReceived.After(n.from.Add(-time.Duration(e.TimeoutSeconds)*time.Second/2))
}

// admitUnkeyed admits a request of a user and path no APF dump lists
// when it may end early in the window, while fewer than maxEarlyEnds such
// requests are open (each is held until the log shows its end, or its
// own end).
func (n *AuditNeed) admitUnkeyed(e *audit.Event) bool {
	if !n.mayEndEarly(e) {
		return false
	}
	if n.open >= maxEarlyEnds {
		n.earlyDropped++
		return false
	}
	n.open++
	return true
}

// addUnkeyed keeps e, a request of no key the filter admitted, when it
// ended early in the window, up to maxEarlyEnds.
func (n *AuditNeed) addUnkeyed(e *audit.Event) {
	n.open--
	if n.from.IsZero() || !endedEarly(e, n.from, n.to) {
		return
	}
	if n.early == maxEarlyEnds {
		n.earlyDropped++
		return
	}
	n.early++
	n.events = append(n.events, *e)
}

// Add keeps a copy of e, a request the filter admitted, when the
// diagnosis can use it as read whole.
func (n *AuditNeed) Add(e *audit.Event) {
	kn := n.keys[auditKey{e.User, e.Path}]
	if kn == nil {
		n.addUnkeyed(e)
		return
	}
	if kn.over {
		return
	}
	if kn.near(e.RequestReceived) && !e.RequestReceived.IsZero() || !n.from.IsZero() && endedEarly(e, n.from, n.to) {
		n.events = append(n.events, *e)
	}
}

// Events are the requests kept, in the order read, but for those of a
// user and path past its bound.
func (n *AuditNeed) Events() []audit.Event {
	return slices.DeleteFunc(n.events, func(e audit.Event) bool {
		kn := n.keys[auditKey{e.User, e.Path}]
		return kn != nil && kn.over
	})
}

// Early counts the requests kept of users and paths no APF dump lists,
// for having ended early in the window.
func (n *AuditNeed) Early() int { return n.early }

// Read counts the requests read of a user and path of the dumps.
func (n *AuditNeed) Read() int { return n.read }

// Notes say which users and paths had more requests near their starts
// than the join keeps: none of theirs is joined.
func (n *AuditNeed) Notes() []string {
	var over []string
	for k, kn := range n.keys {
		if kn.over {
			over = append(over, fmt.Sprintf("%s on %s", k.user, k.path))
		}
	}
	var notes []string
	if n.earlyDropped > 0 {
		notes = append(notes, fmt.Sprintf("audit log: %d more watch requests of users no APF dump lists may have ended early in the samples' window than the %d read as evidence of closures: the rest are not read", n.earlyDropped, maxEarlyEnds))
	}
	if len(over) == 0 {
		return notes
	}
	sort.Strings(over)
	more := ""
	if len(over) > maxOverNamed {
		more = fmt.Sprintf(" and %d more", len(over)-maxOverNamed)
		over = over[:maxOverNamed]
	}
	return append(notes, fmt.Sprintf("audit log: more watch requests near the APF starts of %s%s than the join keeps (%d per start, %d more per user and path): none of theirs is joined, their findings name no source from the log", strings.Join(over, "; "), more, maxAuditFits+1, maxEarlyPerKey))
}
