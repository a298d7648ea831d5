package audit

import (
	"cmp"
	"fmt"
	"hash/maphash"
	"net/url"
	"slices"
	"strconv"
	"time"
)

// rec is one record of a log as a format's reader decoded it: one stage
// of one request. Strings may alias the reader's buffer until merged.
type rec struct {
	line                  int
	auditID, user, verb   string
	uri, userAgent        string
	sourceIPs             []string
	received, stageTime   time.Time
	start, end            bool // the record shows when the request started, when it ended
	code                  int
	timeoutKnown, noQuery bool
	timeoutSeconds        int
}

// merger merges the records of a request into one Event, calling each
// once per request: as soon as its start and end are known, or at the end.
// Not safe for concurrent use.
type merger struct {
	name    string
	limits  Limits
	sum     *Summary
	each    func(*Event) error
	pending map[string]*pendingEvent
	// done holds the requests already passed to each, by a seeded hash
	// of their auditID (8 bytes each, not the ID).
	done map[uint64]struct{}
	seed maphash.Seed
	strs interner
}

type pendingEvent struct {
	Event
	start, end bool
}

func (m *merger) init(name string, limits Limits, sum *Summary, each func(*Event) error) {
	m.name, m.limits, m.sum, m.each = name, limits, sum, each
	m.pending = map[string]*pendingEvent{}
	m.done = map[uint64]struct{}{}
	m.seed = maphash.MakeSeed()
	m.strs.init()
}

// add merges one record.
func (m *merger) add(r *rec) error {
	if r.verb != "watch" {
		m.sum.Others++
		return nil
	}
	if r.auditID == "" {
		if err := m.count(); err != nil {
			return err
		}
		p := m.newEvent(r)
		return m.each(&p.Event)
	}
	if p, ok := m.pending[r.auditID]; ok {
		m.fill(p, r)
		if p.start && p.end {
			delete(m.pending, p.AuditID)
			m.done[maphash.String(m.seed, p.AuditID)] = struct{}{}
			return m.each(&p.Event)
		}
		return nil
	}
	h := maphash.String(m.seed, r.auditID)
	if _, ok := m.done[h]; ok {
		return nil // a later stage of a request passed on
	}
	if err := m.count(); err != nil {
		return err
	}
	p := m.newEvent(r)
	if p.start && p.end {
		m.done[h] = struct{}{}
		return m.each(&p.Event)
	}
	m.pending[p.AuditID] = p
	return nil
}

// count counts a new watch request, failing past the bound.
func (m *merger) count() error {
	if m.sum.Watches >= m.limits.Watches {
		return fmt.Errorf("%w (%d)", errTooMany, m.limits.Watches)
	}
	m.sum.Watches++
	return nil
}

func (m *merger) newEvent(r *rec) *pendingEvent {
	p := &pendingEvent{Event: Event{Source: m.name, Line: r.line, AuditID: string([]byte(r.auditID)), Verb: "watch"}}
	m.fill(p, r)
	return p
}

// fill fills what p lacks from r.
func (m *merger) fill(p *pendingEvent, r *rec) {
	e := &p.Event
	if e.User == "" && r.user != "" {
		e.User = m.strs.get(r.user)
	}
	if e.RequestURI == "" && r.uri != "" {
		e.RequestURI = string([]byte(r.uri))
		e.Path, e.TimeoutSeconds = m.strs.get(pathOf(r.uri)), timeoutOf(r.uri)
	}
	if e.UserAgent == "" && r.userAgent != "" {
		e.UserAgent = m.strs.get(r.userAgent)
	}
	if len(e.SourceIPs) == 0 && len(r.sourceIPs) > 0 {
		e.SourceIPs = m.strs.list(r.sourceIPs)
	}
	if e.RequestReceived.IsZero() {
		e.RequestReceived = r.received
	}
	if r.start {
		p.start = true
	}
	if r.end {
		p.end = true
		e.Completed = r.stageTime
		if r.code != 0 {
			e.Code = r.code
		}
	}
}

// flush passes on the requests whose end was not read, in the order of
// their first line.
func (m *merger) flush() error {
	rest := make([]*pendingEvent, 0, len(m.pending))
	for _, p := range m.pending {
		rest = append(rest, p)
	}
	slices.SortFunc(rest, func(a, b *pendingEvent) int { return cmp.Compare(a.Line, b.Line) })
	clear(m.pending)
	for _, p := range rest {
		if err := m.each(&p.Event); err != nil {
			return err
		}
	}
	return nil
}

// pathOf is a request URI's path, its query removed.
func pathOf(uri string) string {
	if u, err := url.ParseRequestURI(uri); err == nil {
		return u.Path
	}
	return uri
}

// timeoutOf is a request URI's timeoutSeconds, 0 when absent or not a
// count of seconds.
func timeoutOf(uri string) int {
	u, err := url.ParseRequestURI(uri)
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(u.Query().Get("timeoutSeconds"))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// sortByLine orders events by their source, then first line.
func sortByLine(events []Event) {
	slices.SortStableFunc(events, func(a, b Event) int { return cmp.Compare(a.Line, b.Line) })
}

// maxInterned bounds the strings an interner keeps: past it, strings are
// copied, not kept.
const maxInterned = 1 << 16

// interner shares the copies of the strings a log repeats (users, paths,
// user agents, addresses). Not safe for concurrent use.
type interner struct {
	m     map[string]string
	lists map[string][]string
}

func (in *interner) init() {
	in.m = map[string]string{}
	in.lists = map[string][]string{}
}

// get returns a copy of s that outlives the reader's buffer.
func (in *interner) get(s string) string {
	if v, ok := in.m[s]; ok {
		return v
	}
	v := string([]byte(s))
	if len(in.m) < maxInterned {
		in.m[v] = v
	}
	return v
}

// list returns a shared copy of ss.
func (in *interner) list(ss []string) []string {
	if len(ss) == 1 {
		if v, ok := in.lists[ss[0]]; ok {
			return v
		}
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = in.get(s)
	}
	if len(ss) == 1 && len(in.lists) < maxInterned {
		in.lists[out[0]] = out
	}
	return out
}
