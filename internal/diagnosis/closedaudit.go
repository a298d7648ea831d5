package diagnosis

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/watch-doctor/watch-doctor/pkg/audit"
)

// The audit log's side of a closure: a watch the server closed ends long
// before its timeoutSeconds, and its client's next watch of the same path
// follows it closely. Per user and path, the watch requests of the key's
// resource that completed in the window in under half their
// timeoutSeconds, oldest first.

// earlyEnds is one user and path's watches that ended early.
type earlyEnds struct {
	user, path string
	events     []audit.Event
}

// earlyEndsOf are the early-ended watches of key completed between from
// and to, per user and path, in order of user and path.
func earlyEndsOf(events []audit.Event, key string, from, to time.Time) []earlyEnds {
	by := map[[2]string][]audit.Event{}
	for _, e := range events {
		if !strings.EqualFold(e.Verb, "watch") || e.Completed.IsZero() || e.TimeoutSeconds <= 0 {
			continue
		}
		if e.Completed.Before(from) || e.Completed.After(to) || auditResourceKey(e.Path) != key || !EndedEarly(e) {
			continue
		}
		k := [2]string{e.User, e.Path}
		by[k] = append(by[k], e)
	}
	out := make([]earlyEnds, 0, len(by))
	for k, es := range by {
		sort.Slice(es, func(i, j int) bool { return es[i].RequestReceived.Before(es[j].RequestReceived) })
		out = append(out, earlyEnds{user: k[0], path: k[1], events: es})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].user != out[j].user {
			return out[i].user < out[j].user
		}
		return out[i].path < out[j].path
	})
	return out
}

// EndedEarly reports whether e is a watch request that completed in under
// half its timeoutSeconds: the audit log's mark of a watch the server
// closed (or its client gave up on). The engine keeps such events of a
// run's span even of users no APF dump listed.
func EndedEarly(e audit.Event) bool {
	if !strings.EqualFold(e.Verb, "watch") || e.Completed.IsZero() || e.TimeoutSeconds <= 0 {
		return false
	}
	return e.Completed.Sub(e.RequestReceived) < time.Duration(e.TimeoutSeconds)*time.Second/2
}

// auditResourceKey is the "group/resource" of a request path
// (/api/v1/[watch/][namespaces/NS/]RESOURCE, /apis/G/V/...); "" when the
// path names none.
func auditResourceKey(path string) string {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	group := ""
	switch {
	case len(segs) >= 3 && segs[0] == "api":
		segs = segs[2:]
	case len(segs) >= 4 && segs[0] == "apis":
		group, segs = segs[1], segs[3:]
	default:
		return ""
	}
	if len(segs) > 0 && segs[0] == "watch" {
		segs = segs[1:]
	}
	if len(segs) >= 3 && segs[0] == "namespaces" {
		segs = segs[2:]
	}
	if len(segs) == 0 || segs[0] == "" {
		return ""
	}
	return group + "/" + segs[0]
}

// evidence says how the watches ended and how soon the next began.
func (ee earlyEnds) evidence() string {
	var lasted, gaps []string
	for i, e := range ee.events {
		lasted = append(lasted, roundDuration(e.Completed.Sub(e.RequestReceived)))
		if i > 0 {
			gaps = append(gaps, roundDuration(e.RequestReceived.Sub(ee.events[i-1].Completed)))
		}
	}
	s := fmt.Sprintf("audit log (%s:%d): %d watch request(s) of %s by %s ended long before their timeoutSeconds (%ds), after %s", ee.events[0].Source, ee.events[0].Line, len(ee.events), ee.path, ee.user, ee.events[0].TimeoutSeconds, strings.Join(lasted, ", "))
	if len(gaps) > 0 {
		s += "; the next began " + strings.Join(gaps, ", ") + " after each ended"
	}
	return s
}

// earlyOf is the early ends of r's user and path among early; false when
// it has none.
func earlyOf(r returning, early []earlyEnds) (earlyEnds, bool) {
	for _, ee := range early {
		if ee.user == userOf(r.newest) && ee.path == r.newest.Path {
			return ee, true
		}
	}
	return earlyEnds{}, false
}

// auditPick is the one client, of several whose watches came back in the
// APF dumps, whose watches of the resource also ended early in the audit
// log; false when none or more than one did (then they stay "one of
// these").
func auditPick(clients []returning, early []earlyEnds) (returning, bool) {
	if len(clients) < 2 {
		return returning{}, false
	}
	var picked []returning
	for _, r := range clients {
		if _, ok := earlyOf(r, early); ok {
			picked = append(picked, r)
		}
	}
	if len(picked) != 1 {
		return returning{}, false
	}
	return picked[0], true
}

// auditAgreement is what the audit log adds to the tie of r: that its
// watches ended early too, and, when it picked r among came back (picked),
// that the others' did not; "" when the log shows none of r's.
func auditAgreement(r returning, early []earlyEnds, picked bool, came int) string {
	ee, ok := earlyOf(r, early)
	if !ok {
		return ""
	}
	if picked {
		return fmt.Sprintf("; of the %d clients whose watches of it came back, the audit log shows only %s's ending long before their timeoutSeconds (%d time(s) in that window)", came, ee.user, len(ee.events))
	}
	return fmt.Sprintf("; the audit log agrees: %d of its watches of it ended long before their timeoutSeconds in that window", len(ee.events))
}
