package diagnosis

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/watch-doctor/watch-doctor/pkg/apf"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// maxCandidatesListed bounds the candidates a finding lists: with more,
// the finding says how many there are and which fields they share.
const maxCandidatesListed = 10

// classSearchBudget bounds the steps spent deciding which object type
// serves which group/resource (see inferClasses); beyond it the types are
// not used.
const classSearchBudget = 200_000

// matchInput is what client matching needs of one dump and APF dump.
type matchInput struct {
	watchers []api.Watcher
	reqs     []apf.Request
	at       time.Time
	slack    time.Duration
	// details: the APF dump names verbs and paths; without them every
	// executing non-exempt request is a candidate and nothing better than
	// ambiguous can be claimed.
	details bool
	// incomplete says why the APF dump may lack some watchers' requests
	// ("" when it lists at least one request per watcher and skipped no
	// row): a pair is then at best likely.
	incomplete string
	// mixed: the goroutine dump and the APF dump may come from different
	// processes; nothing better than ambiguous can be claimed.
	mixed string
	// seenAt is when an earlier sample of the same process saw each
	// watcher (by goroutine id), zero when it did not: the watcher's
	// request was executing then, so it is at least that old now.
	seenAt map[int64]time.Time
	// watchRequests is apiserver_longrunning_requests{verb="WATCH"} per
	// group/resource and scope, nil without /metrics: the object types
	// are checked against it (see contradiction).
	watchRequests map[string]map[string]float64
	// metricsAt is when /metrics was read; zero when unknown.
	metricsAt time.Time
}

// matchResult is the attribution of each watcher: pairs[i] is watcher i's.
type matchResult struct {
	pairs []pairing
	// used marks requests attributed to, or candidate of, some watcher.
	used []bool
	// typesDropped says why the handlers' object types were not used
	// although the counts allowed it: /metrics contradicts them.
	typesDropped string
}

// pairing is what client matching says of one watcher.
type pairing struct {
	req  int       // attributed request, -1 for none
	conf api.Match // api.MatchExact, MatchLikely, MatchAmbiguous or ""
	why  string
	// candidates of an ambiguous watcher, listed only when there are at
	// most maxCandidatesListed of them; nCand counts them all.
	candidates []int
	nCand      int
	// sameUser: every candidate of an ambiguous watcher has this user.
	sameUser string
	// hint is the request goroutine-id order would pair an ambiguous
	// watcher with, -1 for none: a lead, not a match (see orderHint).
	hint int
}

// matchClients attributes executing watch requests (APF) to the
// initial-phase watchers of one dump, in O((watchers + requests) log) time
// and linear memory.
//
// Every watcher in its initial phase holds one executing APF request: APF
// keeps a watch executing until WatchInitialized, which process() signals
// after the replay (cache_watcher.go:541). What ties a watcher to its
// request:
//   - age: the request is at least as old as the watcher has been blocked
//     (capture time - StartTime >= wait - slack), and at least as old as
//     the time since an earlier sample saw the watcher;
//   - object type: handlers of one group/resource print one itab word in
//     doEncode (objectType), so the requests of a group/resource go to the
//     watchers of one word; when the counts allow a single assignment of
//     resources to words, a watcher's candidates are its resource's
//     requests (inferClasses).
//
// A pair is exact only when the evidence forces it: the watcher has one
// possible request, or every pairing of its group gives it the same one.
// It is likely when it would be forced but the APF dump may be missing
// requests. Everything else is ambiguous, with the candidates. Goroutine
// id order is not used: ids are handed out per P in batches of 16
// (runtime/proc.go, _GoidCacheBatch), so a later request can get a
// smaller id.
func matchClients(in matchInput) matchResult {
	nw, nr := len(in.watchers), len(in.reqs)
	res := matchResult{pairs: make([]pairing, nw), used: make([]bool, nr)}
	for i := range res.pairs {
		res.pairs[i].req, res.pairs[i].hint = -1, -1
	}
	if nw == 0 || nr == 0 {
		return res
	}
	trusted := in.details && in.mixed == ""
	m := newMatcher(in, trusted)
	res.typesDropped = m.dropped
	m.run(&res)
	return res
}

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
	nres := len(m.resources)
	m.allowed = make([][]int, nres)
	all := m.allClasses()
	for r := range m.allowed {
		m.allowed[r] = all
	}
	nw, nr := len(m.in.watchers), len(m.in.reqs)
	untyped := func() {
		for i := range m.wclass {
			m.wclass[i] = wild
		}
	}
	if len(m.classes) == 0 || !m.trusted || m.in.incomplete != "" || nr < nw {
		untyped()
		return
	}
	for _, k := range m.resources {
		if k == "" {
			untyped()
			return
		}
	}
	count := make([]int, nres)
	for _, x := range m.rres {
		count[x]++
	}
	nOf := make([]int, len(m.classes))
	wilds := 0
	for _, c := range m.wclass {
		if c == wild {
			wilds++
		} else {
			nOf[c]++
		}
	}
	// spare: requests that may go to watchers of unknown type or to no
	// watcher at all.
	spare := wilds + nr - nw
	order := make([]int, nres)
	for r := range order {
		order[r] = r
	}
	sort.Slice(order, func(a, b int) bool { return count[order[a]] > count[order[b]] })
	possible := make([]map[int]bool, nres)
	for r := range possible {
		possible[r] = map[int]bool{}
	}
	assign := make([]int, nres)
	capOf := make([]int, len(m.classes))
	steps := 0
	exhausted := false
	deficit := func() int {
		d := 0
		for c, n := range nOf {
			if capOf[c] < n {
				d += n - capOf[c]
			}
		}
		return d
	}
	var rec func(k, left int) bool
	rec = func(k, left int) bool {
		steps++
		if steps > classSearchBudget {
			exhausted = true
			return false
		}
		if deficit() > left {
			return false
		}
		if k == nres {
			surplus := 0
			for c, n := range nOf {
				surplus += capOf[c] - n
			}
			for x, c := range assign {
				if c == wild {
					surplus += count[x]
				}
			}
			if surplus != spare {
				return false
			}
			for x, c := range assign {
				possible[x][c] = true
				if c != wild && capOf[c] > nOf[c] {
					possible[x][wild] = true
				}
			}
			return true
		}
		r := order[k]
		found := false
		for _, c := range all {
			if c == wild && spare < count[r] {
				continue
			}
			assign[r] = c
			if c != wild {
				capOf[c] += count[r]
			}
			if rec(k+1, left-count[r]) {
				found = true
			}
			if c != wild {
				capOf[c] -= count[r]
			}
			if exhausted {
				return false
			}
		}
		return found
	}
	if !rec(0, nr) || exhausted {
		untyped()
		return
	}
	m.typesUsed = true
	for r := range m.allowed {
		var cs []int
		for _, c := range all {
			if possible[r][c] {
				cs = append(cs, c)
			}
		}
		m.allowed[r] = cs
	}
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
	for _, rsOf := range resOf {
		sort.Ints(rsOf)
	}
	taken := map[int]bool{}
	var rest []int
	for _, i := range cp.ws {
		n, last := 0, -1
		for _, r := range resOf[m.wclass[i]] {
			l := byRes[r]
			x := sort.Search(len(l), func(x int) bool { return m.age[l[x]] < m.need[i] })
			n += x
			if x > 0 {
				last = l[0]
			}
		}
		if n == 1 && !taken[last] {
			taken[last] = true
			m.pair(res, i, last, len(cp.rs), len(cp.ws))
			continue
		}
		rest = append(rest, i)
	}
	for _, i := range rest {
		var cands []int
		n := 0
		for _, r := range resOf[m.wclass[i]] {
			for _, j := range byRes[r] {
				if m.age[j] < m.need[i] {
					break
				}
				res.used[j] = true
				if taken[j] {
					continue
				}
				n++
				if len(cands) <= maxCandidatesListed {
					cands = append(cands, j)
				}
			}
		}
		same := n <= maxCandidatesListed
		for _, j := range cands {
			same = same && userOf(m.in.reqs[j]) == userOf(m.in.reqs[cands[0]])
		}
		m.ambiguousN(res, i, cands, n, same, len(cp.ws), len(cp.rs), false)
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

func (m *matcher) ambiguous(res *matchResult, i int, cands []int, sameUser bool, watchers, reqs int, infeasible bool) {
	n := len(cands)
	if n > maxCandidatesListed {
		cands = cands[:maxCandidatesListed+1]
	}
	m.ambiguousN(res, i, cands, n, sameUser, watchers, reqs, infeasible)
}

// ambiguousN records an ambiguous watcher with n candidates, of which
// cands are the first (more than maxCandidatesListed means too many to
// list).
func (m *matcher) ambiguousN(res *matchResult, i int, cands []int, n int, sameUser bool, watchers, reqs int, infeasible bool) {
	res.pairs[i].conf, res.pairs[i].nCand = api.MatchAmbiguous, n
	for _, j := range cands {
		res.used[j] = true
	}
	if n <= maxCandidatesListed {
		res.pairs[i].candidates = slices.Clone(cands)
	}
	if sameUser && n > 0 {
		res.pairs[i].sameUser = userOf(m.in.reqs[cands[0]])
	}
	if n == 0 {
		res.pairs[i].conf = ""
	}
	key := ambiguousKey{n: n, watchers: watchers, reqs: reqs, infeasible: infeasible, old: m.need[i] > 0, class: m.wclass[i], sameUser: res.pairs[i].sameUser}
	why, ok := m.whys[key]
	if !ok {
		why = m.ambiguousWhy(i, key)
		m.whys[key] = why
	}
	res.pairs[i].why = why
}

// ambiguousKey is all the explanation of an ambiguous watcher depends on
// besides the matcher itself: the watchers of a relist storm share it, so
// it is formatted once for all of them, not 50,000 times.
type ambiguousKey struct {
	n, watchers, reqs int
	infeasible, old   bool
	class             int
	sameUser          string
}

// ambiguousWhy explains the ambiguous match of watcher i (of key).
func (m *matcher) ambiguousWhy(i int, k ambiguousKey) string {
	var why string
	switch {
	case k.n == 0:
	case m.in.mixed != "":
		why = fmt.Sprintf("the goroutine dump and the APF dump may come from different API server processes: %d executing watch requests could be this watch's", k.n)
	case !m.in.details:
		why = fmt.Sprintf("the APF dump was taken without includeRequestDetails=1: %d executing requests could be this watch's", k.n)
	case k.infeasible:
		why = fmt.Sprintf("%d executing watch requests could be this watch's; the ages do not allow one request per watcher (the APF dump was taken later, or the clock is off), so none is forced", k.n)
	default:
		why = fmt.Sprintf("%d executing watch requests could be this watch's: %s; nothing in the dumps separates them (goroutine ids do not follow arrival order)", k.n, m.separation(i, k.watchers, k.reqs))
	}
	if m.dropped != "" && k.n > 0 {
		why += "; the handlers' object types were not used: " + m.dropped
	}
	if k.sameUser != "" && k.n > 1 {
		why += fmt.Sprintf("; every candidate has user %q, so the user is known exactly", k.sameUser)
	}
	return m.texts.intern(why)
}

// separation says what the candidates of watcher i were narrowed by.
func (m *matcher) separation(i, watchers, reqs int) string {
	var by []string
	if m.need[i] > 0 {
		by = append(by, "old enough for the watcher's wait")
	}
	if m.typesUsed && m.wclass[i] != wild {
		by = append(by, fmt.Sprintf("of the resources its handler's object type %s may serve", m.classes[m.wclass[i]]))
	}
	if len(by) == 0 {
		return fmt.Sprintf("%d watchers and %d requests may pair among themselves", watchers, reqs)
	}
	return strings.Join(by, ", ") + fmt.Sprintf(" (%d watchers and %d requests may pair among themselves)", watchers, reqs)
}

func (m *matcher) exactWhy(i, reqs, watchers int) string {
	typed := m.typesUsed && m.wclass[i] != wild
	switch {
	case len(m.in.reqs) == 1:
		return "the APF dump lists exactly one executing watch request"
	case typed && reqs == 1 && watchers == 1:
		return fmt.Sprintf("the only watcher whose handler encodes object type %s and the only executing watch request of the resource that type must serve (the counts of watchers per type and of requests per resource allow no other assignment)", m.classes[m.wclass[i]])
	case typed:
		return fmt.Sprintf("of the resources its handler's object type %s may serve, every pairing of watchers with requests old enough for them gives it this one", m.classes[m.wclass[i]])
	case m.in.at.IsZero():
		return fmt.Sprintf("the only pairing of the %d executing watch requests that explains every watcher", reqs)
	}
	return fmt.Sprintf("every pairing of watchers with the %d executing watch requests old enough for them gives it this one", reqs)
}

func userOf(r apf.Request) string {
	if r.User == "" {
		return r.FlowDistinguisher
	}
	return r.User
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

// applyMatches writes the attribution into the findings.
func applyMatches(findings []*api.Finding, in matchInput, res matchResult) {
	byID := make(map[int64]*api.Finding, len(findings))
	for _, f := range findings {
		byID[f.Watcher.GoroutineID] = f
	}
	// The watchers of a storm share their ambiguous evidence word for word:
	// formatted once, held once.
	shared := formatted{}
	for i, w := range in.watchers {
		f := byID[w.GoroutineID]
		if f == nil {
			continue
		}
		switch {
		case res.pairs[i].req >= 0:
			r := in.reqs[res.pairs[i].req]
			f.Client = clientFrom(r, res.pairs[i].conf)
			f.Evidence = append(f.Evidence, fmt.Sprintf("client match %s: %s", res.pairs[i].conf, res.pairs[i].why))
			if !in.at.IsZero() {
				f.Evidence = append(f.Evidence, fmt.Sprintf("request started %s before the capture", roundDuration(in.at.Sub(r.StartTime))))
			}
		case res.pairs[i].conf == api.MatchAmbiguous:
			var cs []apf.Request
			for _, j := range res.pairs[i].candidates {
				cs = append(cs, in.reqs[j])
				f.Candidates = append(f.Candidates, toRequest(f.APIServer, in.reqs[j], in.at))
			}
			if len(cs) > 0 {
				f.Client = commonClient(cs)
			} else {
				f.Client = &api.Client{Match: api.MatchAmbiguous}
				f.Evidence = append(f.Evidence, shared.get("%d candidates, too many to list", res.pairs[i].nCand))
			}
			f.Client.User = res.pairs[i].sameUser
			f.Evidence = append(f.Evidence, shared.get("client match ambiguous: %s", res.pairs[i].why))
			if j := res.pairs[i].hint; j >= 0 && res.pairs[i].sameUser == "" {
				// Concatenated, not formatted: a storm has one per watcher.
				f.Evidence = append(f.Evidence, leadPrefix+userOf(in.reqs[j])+leadSuffix)
			}
		}
	}
}

// formatted memoizes texts formatted from one format and one argument.
type formatted map[formattedKey]string

type formattedKey struct {
	format string
	arg    any
}

func (f formatted) get(format string, arg any) string {
	k := formattedKey{format, arg}
	s, ok := f[k]
	if !ok {
		s = fmt.Sprintf(format, arg)
		f[k] = s
	}
	return s
}

// The evidence of a lead by goroutine id: leadPrefix USER leadSuffix.
const (
	leadPrefix = "a lead, not a match: by handler goroutine id against arrival order this would be "
	leadSuffix = "'s request; ids followed arrival order in 60 of 60 runs measured on a 2-CPU server, but not in a capture from that server of two requests 4 ms apart: they are handed out per P in batches, so a later request can get a smaller id"
)

func clientFrom(r apf.Request, match api.Match) *api.Client {
	st := r.StartTime.UTC()
	return &api.Client{
		User: userOf(r), Verb: r.Verb, Path: r.Path, Namespace: r.Namespace, Resource: r.Resource,
		APIVersion: r.APIVersion, PriorityLevel: r.PriorityLevel, FlowSchema: r.FlowSchema,
		Seats: r.Seats(), StartTime: &st, Match: match,
	}
}

// commonClient keeps the fields all candidates agree on.
func commonClient(cs []apf.Request) *api.Client {
	c := clientFrom(cs[0], api.MatchAmbiguous)
	c.StartTime = nil
	for _, r := range cs[1:] {
		o := clientFrom(r, api.MatchAmbiguous)
		keep := func(a *string, b string) {
			if *a != b {
				*a = ""
			}
		}
		keep(&c.User, o.User)
		keep(&c.Verb, o.Verb)
		keep(&c.Path, o.Path)
		keep(&c.Namespace, o.Namespace)
		keep(&c.Resource, o.Resource)
		keep(&c.APIVersion, o.APIVersion)
		keep(&c.PriorityLevel, o.PriorityLevel)
		keep(&c.FlowSchema, o.FlowSchema)
		if c.Seats != o.Seats {
			c.Seats = 0
		}
	}
	return c
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
