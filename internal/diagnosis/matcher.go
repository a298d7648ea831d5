package diagnosis

import (
	"time"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// matcher holds the sorted views matchClients works on.
type matcher struct {
	in      matchInput
	trusted bool
	need    []time.Duration // per watcher: the least age of its request
	age     []time.Duration // per request
	wclass  []int           // per watcher: class index, or wild
	rres    []int           // per request: resource index
	// classes are the distinct object types; resources the distinct
	// group/resources; allowed[r] the classes resource r may be served by
	// (wild included when some of its requests may go to watchers of no
	// known type).
	classes   []string
	resources []string
	allowed   [][]int
	typesUsed bool
	// dropped says why the object types were not used after all (see
	// contradiction).
	dropped string
	// texts shares the explanations many watchers get word for word.
	texts interner
	// whys are the explanations of ambiguous watchers, formatted once
	// per ambiguousKey.
	whys map[ambiguousKey]string
}

// wild is the class of watchers whose object type is unknown.
const wild = -1

func newMatcher(in matchInput, trusted bool) *matcher {
	m := &matcher{in: in, trusted: trusted, texts: interner{}, whys: map[ambiguousKey]string{}}
	m.need = make([]time.Duration, len(in.watchers))
	for i, w := range in.watchers {
		m.need[i] = m.needOf(w)
	}
	m.age = make([]time.Duration, len(in.reqs))
	for j, r := range in.reqs {
		if in.at.IsZero() {
			m.age[j] = 1<<63 - 1
		} else {
			m.age[j] = in.at.Sub(r.StartTime)
		}
	}
	classIdx := map[string]int{}
	m.wclass = make([]int, len(in.watchers))
	for i, w := range in.watchers {
		m.wclass[i] = wild
		if w.Handler == nil || w.Handler.ObjectType == "" || !trusted {
			continue
		}
		c, ok := classIdx[w.Handler.ObjectType]
		if !ok {
			c = len(m.classes)
			classIdx[w.Handler.ObjectType] = c
			m.classes = append(m.classes, w.Handler.ObjectType)
		}
		m.wclass[i] = c
	}
	resIdx := map[string]int{}
	m.rres = make([]int, len(in.reqs))
	for j, r := range in.reqs {
		k := resourceKey(r)
		if !trusted {
			k = ""
		}
		x, ok := resIdx[k]
		if !ok {
			x = len(m.resources)
			resIdx[k] = x
			m.resources = append(m.resources, k)
		}
		m.rres[j] = x
	}
	m.inferClasses()
	if why := m.contradiction(); why != "" {
		m.dropTypes()
		m.dropped = why
	}
	return m
}

// needOf is the least age the watcher's request can have; 0 without a
// capture time.
func (m *matcher) needOf(w api.Watcher) time.Duration {
	if m.in.at.IsZero() {
		return 0
	}
	var need time.Duration
	if w.WaitMinutes > 0 {
		need = time.Duration(w.WaitMinutes)*time.Minute - m.in.slack
	}
	if t, ok := m.in.seenAt[w.GoroutineID]; ok && !t.IsZero() {
		need = max(need, m.in.at.Sub(t)-m.in.slack)
	}
	return need
}

// interner keeps one copy of each distinct text: tens of thousands of
// findings often share their explanations word for word.
type interner map[string]string

func (t interner) intern(s string) string {
	if c, ok := t[s]; ok {
		return c
	}
	t[s] = s
	return s
}
