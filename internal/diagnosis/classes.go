package diagnosis

import (
	"slices"
	"sort"
)

// classSearchBudget bounds the steps spent deciding which object type
// serves which group/resource (see inferClasses); beyond it the types are
// not used.
const classSearchBudget = 200_000

// inferClasses decides which object types may serve each group/resource.
//
// Each watcher has one request in the dump (when it is complete), the
// requests of one group/resource all go to watchers of one type, and a
// type's watchers all get requests of the resources assigned to it, so a
// type with n watchers needs resources with at least n requests between
// them (exactly n when no watcher of unknown type and no surplus request
// can take the rest). Every assignment meeting that is enumerated (up to
// classSearchBudget steps); a resource may be served only by the types it
// gets in some assignment. Without types, or when the search gives up,
// every resource may be served by every type.
func (m *matcher) inferClasses() {
	all := m.allClasses()
	m.allowed = make([][]int, len(m.resources))
	for r := range m.allowed {
		m.allowed[r] = all
	}
	if !m.typable() {
		m.untyped()
		return
	}
	s := newClassSearch(m, all)
	if !s.assign(0, len(m.in.reqs)) || s.exhausted {
		m.untyped()
		return
	}
	m.typesUsed = true
	for r := range m.allowed {
		var cs []int
		for _, c := range all {
			if s.possible[r][c] {
				cs = append(cs, c)
			}
		}
		m.allowed[r] = cs
	}
}

// typable reports whether the object types can narrow the candidates at
// all: some watcher has a known type, the requests are the watches' and
// name their resources, and the APF dump lists one per watcher.
func (m *matcher) typable() bool {
	if len(m.classes) == 0 || !m.trusted || m.in.incomplete != "" || len(m.in.reqs) < len(m.in.watchers) {
		return false
	}
	return !slices.Contains(m.resources, "")
}

// untyped forgets every watcher's object type.
func (m *matcher) untyped() {
	for i := range m.wclass {
		m.wclass[i] = wild
	}
}

// classSearch enumerates the assignments of resources to classes that
// inferClasses accepts.
type classSearch struct {
	all   []int // the classes, wild first
	count []int // per resource: its requests
	nOf   []int // per class: its watchers
	// spare: requests that may go to watchers of unknown type or to no
	// watcher at all.
	spare int
	order []int // resources, most requests first
	// possible[r][c]: some accepted assignment gives resource r class c.
	possible []map[int]bool
	cur      []int // the assignment being built, per resource
	capOf    []int // per class: the requests cur gives it
	steps    int
	// exhausted: the search passed classSearchBudget steps and gave up.
	exhausted bool
}

func newClassSearch(m *matcher, all []int) *classSearch {
	nres := len(m.resources)
	s := &classSearch{all: all, count: make([]int, nres), nOf: make([]int, len(m.classes)), order: make([]int, nres),
		possible: make([]map[int]bool, nres), cur: make([]int, nres), capOf: make([]int, len(m.classes))}
	for _, x := range m.rres {
		s.count[x]++
	}
	wilds := 0
	for _, c := range m.wclass {
		if c == wild {
			wilds++
		} else {
			s.nOf[c]++
		}
	}
	s.spare = wilds + len(m.in.reqs) - len(m.in.watchers)
	for r := range s.order {
		s.order[r] = r
		s.possible[r] = map[int]bool{}
	}
	sort.Slice(s.order, func(a, b int) bool { return s.count[s.order[a]] > s.count[s.order[b]] })
	return s
}

// deficit is how many watchers of the classes lack a request under the
// current partial assignment.
func (s *classSearch) deficit() int {
	d := 0
	for c, n := range s.nOf {
		if s.capOf[c] < n {
			d += n - s.capOf[c]
		}
	}
	return d
}

// assign tries every class for the k-th resource (in order) with left
// requests not yet assigned, and reports whether some completion is
// accepted (recording it in possible).
func (s *classSearch) assign(k, left int) bool {
	s.steps++
	if s.steps > classSearchBudget {
		s.exhausted = true
		return false
	}
	if s.deficit() > left {
		return false
	}
	if k == len(s.order) {
		return s.accept()
	}
	r := s.order[k]
	found := false
	for _, c := range s.all {
		if c == wild && s.spare < s.count[r] {
			continue
		}
		s.cur[r] = c
		if c != wild {
			s.capOf[c] += s.count[r]
		}
		if s.assign(k+1, left-s.count[r]) {
			found = true
		}
		if c != wild {
			s.capOf[c] -= s.count[r]
		}
		if s.exhausted {
			return false
		}
	}
	return found
}

// accept checks a complete assignment: the requests beyond the typed
// watchers' must be exactly the spare ones. An accepted assignment marks
// each resource's class possible, and wild too where its class has
// requests to spare.
func (s *classSearch) accept() bool {
	surplus := 0
	for c, n := range s.nOf {
		surplus += s.capOf[c] - n
	}
	for x, c := range s.cur {
		if c == wild {
			surplus += s.count[x]
		}
	}
	if surplus != s.spare {
		return false
	}
	for x, c := range s.cur {
		s.possible[x][c] = true
		if c != wild && s.capOf[c] > s.nOf[c] {
			s.possible[x][wild] = true
		}
	}
	return true
}

// allClasses lists every class, wild first.
func (m *matcher) allClasses() []int {
	all := make([]int, 0, len(m.classes)+1)
	all = append(all, wild)
	for c := range m.classes {
		all = append(all, c)
	}
	return all
}
