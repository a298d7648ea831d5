package diagnosis

import (
	"slices"
	"sort"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// component is a set of watchers and requests that may pair only among
// themselves.
type component struct {
	ws, rs  []int
	classes map[int]bool
}

func (m *matcher) run(res *matchResult) {
	// Components: union-find over classes (wild included) and resources.
	nc := len(m.classes) + 1 // node c+1 for class c, 0 for wild
	uf := newUnionFind(nc + len(m.resources))
	for r, cs := range m.allowed {
		for _, c := range cs {
			uf.union(c+1, nc+r)
		}
	}
	comps := map[int]*component{}
	var roots []int
	get := func(node int) *component {
		root := uf.find(node)
		c := comps[root]
		if c == nil {
			c = &component{classes: map[int]bool{}}
			comps[root] = c
			roots = append(roots, root)
		}
		return c
	}
	for i, c := range m.wclass {
		cp := get(c + 1)
		cp.ws = append(cp.ws, i)
		cp.classes[c] = true
	}
	for j, r := range m.rres {
		cp := get(nc + r)
		cp.rs = append(cp.rs, j)
	}
	for _, root := range roots {
		if done(m.in.ctx) {
			return
		}
		cp := comps[root]
		if len(cp.ws) == 0 || len(cp.rs) == 0 {
			continue
		}
		if len(cp.classes) == 1 {
			m.nested(res, cp)
		} else {
			m.general(res, cp)
		}
	}
}

// nested pairs a component where every watcher may take every request old
// enough for it: the requests a watcher may take are a prefix of the
// requests sorted oldest first, so the pairings are decided by counting.
// With p(w) the length of w's prefix and watchers sorted by p, the
// watchers with p <= k take the first k requests whenever there are k of
// them (a tight point): a watcher alone between two tight points is
// forced to the request at the second one, and the others may take any
// request of their prefix after the previous tight point.
func (m *matcher) nested(res *matchResult, cp *component) {
	rs := slices.Clone(cp.rs)
	sort.SliceStable(rs, func(a, b int) bool { return m.age[rs[a]] > m.age[rs[b]] })
	// p of each watcher: requests with age >= need.
	p := make([]int, len(cp.ws))
	for k, i := range cp.ws {
		p[k] = sort.Search(len(rs), func(x int) bool { return m.age[rs[x]] < m.need[i] })
	}
	ws := make([]int, len(cp.ws))
	for k := range ws {
		ws[k] = k
	}
	sort.SliceStable(ws, func(a, b int) bool { return p[ws[a]] < p[ws[b]] })
	// sameTo[x]: the last index y >= x with the user of rs[x..y] equal.
	sameTo := make([]int, len(rs))
	for x := len(rs) - 1; x >= 0; x-- {
		sameTo[x] = x
		if x+1 < len(rs) && userOf(m.in.reqs[rs[x]]) == userOf(m.in.reqs[rs[x+1]]) {
			sameTo[x] = sameTo[x+1]
		}
	}
	feasible := true
	for k, w := range ws {
		if p[w] < k+1 {
			feasible = false // a watcher has no request left: evidence disagrees
			break
		}
	}
	maxP := 0
	// Walk the watchers by p, cutting blocks at tight points.
	start := 0 // first watcher (in ws order) of the current block
	k0 := 0    // requests taken by the blocks before
	for k := range ws {
		if done(m.in.ctx) {
			return
		}
		maxP = max(maxP, p[ws[k]])
		tight := feasible && p[ws[k]] == k+1 && (k+1 == len(ws) || p[ws[k+1]] > k+1)
		if !tight && k+1 < len(ws) {
			continue
		}
		block := ws[start : k+1]
		for _, w := range block {
			i := cp.ws[w]
			from, to := k0, p[w]
			if !feasible {
				from = 0
			}
			if tight && len(block) == 1 {
				m.pair(res, i, rs[to-1], len(rs), len(cp.ws))
				continue
			}
			m.ambiguous(res, i, rs[from:to], sameTo[from] >= to-1, len(cp.ws), len(rs), !feasible)
		}
		if tight && len(block) > 1 {
			m.orderHint(res, cp, block, rs[k0:k+1])
		}
		start, k0 = k+1, k+1
	}
	for x := 0; x < maxP; x++ {
		res.used[rs[x]] = true
	}
}

// general pairs a component where watchers of several object types share
// resources: a watcher with a single possible request is forced to it;
// the others are ambiguous among the requests old enough for them of the
// resources their type may serve.
//
// Cost: O(S log S) for the S requests the component's classes may take,
// counted once per class (S is at most the requests times the classes a
// resource may be served by): each watcher's candidates are a prefix of
// its class's requests, oldest first, found by binary search and counted
// with prefix sums, so a storm of watchers sharing thousands of requests
// costs no pass over them per watcher.
func (m *matcher) general(res *matchResult, cp *component) {
	byRes := map[int][]int{}
	for _, j := range cp.rs {
		byRes[m.rres[j]] = append(byRes[m.rres[j]], j)
	}
	resOf := map[int][]int{} // class -> resources it may serve
	for r := range byRes {
		sort.SliceStable(byRes[r], func(a, b int) bool { return m.age[byRes[r][a]] > m.age[byRes[r][b]] })
		for _, c := range m.allowed[r] {
			resOf[c] = append(resOf[c], r)
		}
	}
	// order[j]: where request j comes when a watcher lists its candidates
	// (by resource, then oldest first).
	order := make(map[int]int, len(cp.rs))
	all := make([]int, 0, len(byRes))
	for r := range byRes {
		all = append(all, r)
	}
	sort.Ints(all)
	for _, r := range all {
		for _, j := range byRes[r] {
			order[j] = len(order)
		}
	}
	pools := map[int]*classPool{}
	for c, rsOf := range resOf {
		sort.Ints(rsOf)
		p := &classPool{}
		for _, r := range rsOf {
			p.reqs = append(p.reqs, byRes[r]...)
		}
		sort.SliceStable(p.reqs, func(a, b int) bool { return m.age[p.reqs[a]] > m.age[p.reqs[b]] })
		pools[c] = p
	}
	taken := map[int]bool{}
	var rest []int
	for _, i := range cp.ws {
		p := pools[m.wclass[i]]
		if p == nil {
			rest = append(rest, i)
			continue
		}
		if x := p.oldEnough(m, i); x == 1 && !taken[p.reqs[0]] {
			taken[p.reqs[0]] = true
			m.pair(res, i, p.reqs[0], len(cp.rs), len(cp.ws))
			continue
		}
		rest = append(rest, i)
	}
	for _, p := range pools {
		p.index(taken)
	}
	for _, i := range rest {
		if done(m.in.ctx) {
			return
		}
		p := pools[m.wclass[i]]
		if p == nil {
			m.ambiguousN(res, i, nil, 0, true, len(cp.ws), len(cp.rs), false)
			continue
		}
		x := p.oldEnough(m, i)
		p.used = max(p.used, x)
		n := x - p.takenBefore[x]
		var cands []int
		if n > 0 && n <= maxCandidatesListed {
			cands = slices.Clone(p.free[:n])
			sort.Slice(cands, func(a, b int) bool { return order[cands[a]] < order[cands[b]] })
		}
		same := n <= maxCandidatesListed
		for _, j := range cands {
			same = same && userOf(m.in.reqs[j]) == userOf(m.in.reqs[cands[0]])
		}
		m.ambiguousN(res, i, cands, n, same, len(cp.ws), len(cp.rs), false)
	}
	for _, p := range pools {
		for _, j := range p.reqs[:p.used] {
			res.used[j] = true
		}
	}
}

// classPool is the requests one class may take, oldest first, for
// general.
type classPool struct {
	reqs []int
	// takenBefore[x]: the requests of reqs[:x] forced to a watcher; free:
	// reqs without them, in the same order (so the free ones of reqs[:x]
	// are free[:x-takenBefore[x]]).
	takenBefore []int
	free        []int
	// used: the longest prefix of reqs some watcher may take.
	used int
}

// oldEnough is how many of the pool's requests are old enough for
// watcher i: a prefix.
func (p *classPool) oldEnough(m *matcher, i int) int {
	return sort.Search(len(p.reqs), func(x int) bool { return m.age[p.reqs[x]] < m.need[i] })
}

// index builds takenBefore and free once the forced pairs are known.
func (p *classPool) index(taken map[int]bool) {
	p.takenBefore = make([]int, len(p.reqs)+1)
	for x, j := range p.reqs {
		p.takenBefore[x+1] = p.takenBefore[x]
		if taken[j] {
			p.takenBefore[x+1]++
		} else {
			p.free = append(p.free, j)
		}
	}
}

// orderHint pairs a block of watchers with as many requests by order:
// handler goroutine id against arrival time. Ids grow with creation, but
// the runtime hands them to each P in batches of 16 (runtime/proc.go,
// _GoidCacheBatch), so a later request can get a smaller id on a server
// with many Ps. On a 2-CPU v1.37.2 server the order held in 60 runs of
// 60 measured, yet the shipped pr141899 capture from that server inverts
// it (docs/analyze.md, "Attribution"): a lead worth printing, never evidence enough
// to name a client.
func (m *matcher) orderHint(res *matchResult, cp *component, block []int, reqs []int) {
	ws := make([]int, len(block))
	for k, w := range block {
		ws[k] = cp.ws[w]
	}
	key := func(i int) int64 {
		if h := m.in.watchers[i].Handler; h != nil {
			return h.GoroutineID
		}
		return m.in.watchers[i].GoroutineID
	}
	sort.Slice(ws, func(a, b int) bool { return key(ws[a]) < key(ws[b]) })
	rs := slices.Clone(reqs)
	sort.SliceStable(rs, func(a, b int) bool { return m.in.reqs[rs[a]].ArriveTime.Before(m.in.reqs[rs[b]].ArriveTime) })
	for k, i := range ws {
		if m.age[rs[k]] < m.need[i] {
			return // the order contradicts the ages: no lead
		}
	}
	for k, i := range ws {
		res.pairs[i].hint = rs[k]
	}
}

// pair records a forced pair.
func (m *matcher) pair(res *matchResult, i, j, reqs, watchers int) {
	res.pairs[i].req, res.used[j] = j, true
	res.pairs[i].conf = api.MatchExact
	res.pairs[i].why = m.texts.intern(m.exactWhy(i, reqs, watchers))
	if m.in.incomplete != "" {
		res.pairs[i].conf = api.MatchLikely
		res.pairs[i].why += "; but " + m.in.incomplete + ", so the request actually held may be missing"
	}
	if m.dropped != "" {
		res.pairs[i].why = m.texts.intern(res.pairs[i].why + "; the handlers' object types were not used: " + m.dropped)
	}
	if !m.trusted {
		// Without details or from mixed processes, a lone fit proves
		// nothing: the request list is not the watches'.
		res.pairs[i].req, res.pairs[i].conf = -1, api.MatchAmbiguous
		m.ambiguousN(res, i, []int{j}, 1, true, watchers, reqs, false)
	}
}

// unionFind is a disjoint-set forest over 0..n-1.
type unionFind struct{ parent []int }

func newUnionFind(n int) *unionFind {
	uf := &unionFind{parent: make([]int, n)}
	for i := range uf.parent {
		uf.parent[i] = i
	}
	return uf
}

func (u *unionFind) find(x int) int {
	for u.parent[x] != x {
		u.parent[x] = u.parent[u.parent[x]]
		x = u.parent[x]
	}
	return x
}

func (u *unionFind) union(a, b int) { u.parent[u.find(a)] = u.find(b) }
