package audit

import (
	"bytes"
	"cmp"
	"fmt"
	"hash/maphash"
	"net/url"
	"slices"
	"strconv"
)

// merger merges the records of a request into one Event, calling each
// once per request: as soon as its start and end are known, or at the end.
// Not safe for concurrent use.
type merger struct {
	name   string
	limits Limits
	sum    *Summary
	each   func(*Event) error
	// keep, when set, refuses requests at their first record (Filter);
	// detect stops the read at the first record (Detect).
	keep    Filter
	detect  bool
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

func (m *merger) init(name string, limits Limits, sum *Summary) {
	m.name, m.limits, m.sum = name, limits, sum
	m.pending = map[string]*pendingEvent{}
	m.done = map[uint64]struct{}{}
	m.seed = maphash.MakeSeed()
	m.strs.init()
}

// add merges one record.
func (m *merger) add(r *rec) error {
	if !r.isWatch() {
		m.sum.Others++
		return nil
	}
	if len(r.auditID) == 0 {
		if err := m.count(); err != nil {
			return err
		}
		p := m.newEvent(r)
		if m.keep != nil && !m.keep(&p.Event) {
			return nil
		}
		return m.each(&p.Event)
	}
	if p, ok := m.pending[string(r.auditID)]; ok {
		m.fill(p, r)
		if p.start && p.end {
			delete(m.pending, p.AuditID)
			m.done[maphash.String(m.seed, p.AuditID)] = struct{}{}
			return m.each(&p.Event)
		}
		return nil
	}
	h := maphash.Bytes(m.seed, r.auditID)
	if _, ok := m.done[h]; ok {
		return nil // a later stage of a request passed on
	}
	if err := m.count(); err != nil {
		return err
	}
	p := m.newEvent(r)
	if m.keep != nil && !m.keep(&p.Event) {
		m.done[h] = struct{}{}
		return nil
	}
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
	p := &pendingEvent{Event: Event{Source: m.name, Line: r.line, AuditID: string(r.auditID), Verb: "watch"}}
	m.fill(p, r)
	return p
}

// fill fills what p lacks from r.
func (m *merger) fill(p *pendingEvent, r *rec) {
	e := &p.Event
	if e.User == "" && len(r.user) > 0 {
		e.User = m.strs.get(r.user)
	}
	if e.RequestURI == "" && len(r.uri) > 0 {
		e.RequestURI = string(r.uri)
		if r.path != nil {
			e.Path = m.strs.get(r.path)
		} else {
			e.Path, e.TimeoutSeconds = m.strs.get(pathOf(r.uri)), timeoutOf(r.uri)
		}
	}
	if e.UserAgent == "" && len(r.userAgent) > 0 {
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

// pathOf is a request URI's path, its query removed and, when escaped,
// unescaped (as net/url reads it).
func pathOf(uri []byte) []byte {
	if i := bytes.IndexByte(uri, '?'); i >= 0 {
		uri = uri[:i]
	}
	if bytes.IndexByte(uri, '%') >= 0 {
		if p, err := url.PathUnescape(string(uri)); err == nil {
			return []byte(p)
		}
	}
	return uri
}

// timeoutOf is a request URI's timeoutSeconds, 0 when absent or not a
// count of seconds (negative, fractional, over a year).
func timeoutOf(uri []byte) int {
	i := bytes.IndexByte(uri, '?')
	if i < 0 {
		return 0
	}
	for q := uri[i+1:]; len(q) > 0; {
		var kv []byte
		kv, q, _ = bytes.Cut(q, []byte("&"))
		k, v, _ := bytes.Cut(kv, []byte("="))
		if string(k) != "timeoutSeconds" {
			continue
		}
		n, err := strconv.Atoi(string(v))
		if err != nil || n < 0 || n > 366*24*3600 {
			return 0
		}
		return n
	}
	return 0
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

// get returns a string of s that outlives the reader's buffer.
func (in *interner) get(s []byte) string {
	if v, ok := in.m[string(s)]; ok {
		return v
	}
	v := string(s)
	if len(in.m) < maxInterned {
		in.m[v] = v
	}
	return v
}

// list returns a shared copy of ss.
func (in *interner) list(ss [][]byte) []string {
	if len(ss) == 1 {
		if v, ok := in.lists[string(ss[0])]; ok {
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
