package watches

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/watch-doctor/watch-doctor/pkg/apf"
)

// maxCandidatesListed bounds the candidates a finding lists; the rest are
// counted.
const maxCandidatesListed = 10

// exactSearchBudget bounds the work spent proving pairs forced (watchers x
// edges); beyond it a pair is exact only when its request fits no other
// watcher.
const exactSearchBudget = 5_000_000

// matchInput is what client matching needs of one dump and APF dump.
type matchInput struct {
	watchers []Watcher
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
	parentIDs  bool
	// mixed: the goroutine dump and the APF dump may come from different
	// processes; nothing better than ambiguous can be claimed.
	mixed string
}

// matchResult is the attribution of each watcher (by index).
type matchResult struct {
	req        []int    // attributed request, -1 for none
	conf       []string // MatchExact, MatchLikely, MatchAmbiguous or ""
	why        []string
	candidates [][]int // for ambiguous watchers
	// used marks requests attributed to, or candidate of, some watcher.
	used []bool
}

// matchClients attributes executing watch requests (APF) to the
// initial-phase watchers of one dump.
//
// Every watcher in its initial phase holds one executing APF request: APF
// keeps a watch executing until WatchInitialized, which process() signals
// after the replay (cache_watcher.go:541). A request fits a watcher when it
// is at least as old as the watcher has been blocked: age = capture time -
// StartTime >= wait - slack. Then:
//   - exact: the pair is in every largest one-to-one pairing of watchers
//     with fitting requests (no other pairing explains the evidence), and
//     the APF dump is complete;
//   - likely: a group of n watchers and n requests that fit each other,
//     paired in order, handler goroutine id against arrival time. Ids grow
//     with creation time but are handed out to each P in batches of 16
//     (runtime/proc.go, _GoidCacheBatch), so order is a heuristic;
//   - ambiguous: anything else; the candidates are listed.
func matchClients(in matchInput) matchResult {
	nw, nr := len(in.watchers), len(in.reqs)
	res := matchResult{req: make([]int, nw), conf: make([]string, nw), why: make([]string, nw), candidates: make([][]int, nw), used: make([]bool, nr)}
	for i := range res.req {
		res.req[i] = -1
	}
	if nw == 0 || nr == 0 {
		return res
	}
	fits := func(w Watcher, r apf.Request) bool {
		if in.at.IsZero() || w.WaitMinutes == 0 {
			return true
		}
		return in.at.Sub(r.StartTime) >= time.Duration(w.WaitMinutes)*time.Minute-in.slack
	}
	cand := make([][]int, nw)
	edges := 0
	for i, w := range in.watchers {
		for j, r := range in.reqs {
			if fits(w, r) {
				cand[i] = append(cand[i], j)
			}
		}
		edges += len(cand[i])
	}

	// Forced pairs.
	taken := make([]bool, nr)
	trusted := in.details && in.mixed == ""
	if trusted {
		forced := forcedPairs(cand, nr, nw*edges <= exactSearchBudget)
		for i, j := range forced {
			if j < 0 {
				continue
			}
			res.req[i], taken[j] = j, true
			res.conf[i], res.why[i] = MatchExact, exactWhy(len(cand[i]), nr, in.at)
			if in.incomplete != "" {
				res.conf[i] = MatchLikely
				res.why[i] += "; but " + in.incomplete + ", so the request actually held may be missing"
			}
		}
	}

	// Group the other watchers with the requests left that fit them.
	uf := newUnionFind(nw + nr)
	for i := range in.watchers {
		if res.req[i] >= 0 {
			continue
		}
		for _, j := range cand[i] {
			if !taken[j] {
				uf.union(i, nw+j)
			}
		}
	}
	type group struct{ ws, rs []int }
	groups := map[int]*group{}
	var roots []int
	for i := range in.watchers {
		if res.req[i] >= 0 {
			continue
		}
		root := uf.find(i)
		if groups[root] == nil {
			groups[root] = &group{}
			roots = append(roots, root)
		}
		groups[root].ws = append(groups[root].ws, i)
	}
	for j := range in.reqs {
		if taken[j] {
			continue
		}
		if g := groups[uf.find(nw+j)]; g != nil {
			g.rs = append(g.rs, j)
		}
	}
	orderKey := func(w Watcher) int64 {
		if w.Handler != nil {
			return w.Handler.GoroutineID
		}
		return w.GoroutineID
	}
	for _, root := range roots {
		g := groups[root]
		if len(g.rs) == 0 {
			continue
		}
		ws := append([]int(nil), g.ws...)
		rs := append([]int(nil), g.rs...)
		sort.Slice(ws, func(a, b int) bool { return orderKey(in.watchers[ws[a]]) < orderKey(in.watchers[ws[b]]) })
		sort.Slice(rs, func(a, b int) bool { return in.reqs[rs[a]].ArriveTime.Before(in.reqs[rs[b]].ArriveTime) })
		ordered := trusted && in.parentIDs && len(ws) == len(rs) && len(ws) > 1
		for k := 0; ordered && k < len(ws); k++ {
			ordered = fits(in.watchers[ws[k]], in.reqs[rs[k]])
		}
		for k, i := range ws {
			if ordered {
				res.req[i], res.conf[i] = rs[k], MatchLikely
				res.why[i] = fmt.Sprintf("%d watchers and %d executing watch requests fit each other; paired by order (handler goroutine id against request arrival time), which follows arrival in practice but is not guaranteed: goroutine ids are handed out per P in batches", len(ws), len(rs))
				if in.incomplete != "" {
					res.why[i] += "; and " + in.incomplete
				}
				continue
			}
			res.conf[i] = MatchAmbiguous
			for _, j := range cand[i] {
				if !taken[j] {
					res.candidates[i] = append(res.candidates[i], j)
				}
			}
			switch {
			case in.mixed != "":
				res.why[i] = fmt.Sprintf("the goroutine dump and the APF dump may come from different API server processes: %d executing watch requests could be this watch's", len(res.candidates[i]))
			case !in.details:
				res.why[i] = fmt.Sprintf("the APF dump was taken without includeRequestDetails=1: %d executing requests could be this watch's", len(res.candidates[i]))
			case len(ws) != len(rs):
				res.why[i] = fmt.Sprintf("%d watchers and %d executing watch requests fit each other: no one-to-one pairing is implied", len(ws), len(rs))
			default:
				res.why[i] = fmt.Sprintf("%d executing watch requests fit and nothing separates them", len(res.candidates[i]))
			}
		}
	}
	for i := range in.watchers {
		if res.req[i] >= 0 {
			res.used[res.req[i]] = true
		}
		for _, j := range res.candidates[i] {
			res.used[j] = true
		}
	}
	return res
}

// forcedPairs returns, per watcher, the request it is paired with in every
// largest one-to-one pairing of watchers with the requests that fit them,
// or -1. With prove false (too large to search), a pair counts as forced
// only when it is the watcher's single fit and fits no other watcher.
func forcedPairs(cand [][]int, nr int, prove bool) []int {
	nw := len(cand)
	forced := make([]int, nw)
	for i := range forced {
		forced[i] = -1
	}
	if !prove {
		fitsOf := make([]int, nr)
		for _, cs := range cand {
			for _, j := range cs {
				fitsOf[j]++
			}
		}
		for i, cs := range cand {
			if len(cs) == 1 && fitsOf[cs[0]] == 1 {
				forced[i] = cs[0]
			}
		}
		return forced
	}
	match, size := maxMatching(cand, nr, -1, -1)
	for i := range cand {
		j := match[i]
		if j < 0 {
			continue
		}
		// Forced when no largest pairing does without this pair.
		if _, s := maxMatching(cand, nr, i, j); s < size {
			forced[i] = j
		}
	}
	return forced
}

// maxMatching finds a largest one-to-one pairing of watchers with
// requests by augmenting paths (Kuhn), ignoring the edge (skipW, skipR).
// It returns each watcher's request (-1 for none) and the pairing's size.
func maxMatching(cand [][]int, nr, skipW, skipR int) ([]int, int) {
	ofReq := make([]int, nr)
	for j := range ofReq {
		ofReq[j] = -1
	}
	ofW := make([]int, len(cand))
	for i := range ofW {
		ofW[i] = -1
	}
	seen := make([]int, nr)
	stamp := 0
	var augment func(i int) bool
	augment = func(i int) bool {
		for _, j := range cand[i] {
			if (i == skipW && j == skipR) || seen[j] == stamp {
				continue
			}
			seen[j] = stamp
			if ofReq[j] < 0 || augment(ofReq[j]) {
				ofReq[j], ofW[i] = i, j
				return true
			}
		}
		return false
	}
	size := 0
	for i := range cand {
		stamp++
		if augment(i) {
			size++
		}
	}
	return ofW, size
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

func exactWhy(fit, total int, at time.Time) string {
	switch {
	case total == 1:
		return "the APF dump lists exactly one executing watch request"
	case at.IsZero():
		return fmt.Sprintf("the only pairing of the %d executing watch requests that explains every watcher", total)
	case fit == 1:
		return fmt.Sprintf("the only one of %d executing watch requests old enough for the watcher's wait", total)
	}
	return fmt.Sprintf("every pairing of watchers with the %d executing watch requests old enough for them gives it this one", total)
}

// applyMatches writes the attribution into the findings.
func applyMatches(findings []*Finding, in matchInput, res matchResult) {
	byID := make(map[int64]*Finding, len(findings))
	for _, f := range findings {
		byID[f.Watcher.GoroutineID] = f
	}
	for i, w := range in.watchers {
		f := byID[w.GoroutineID]
		if f == nil {
			continue
		}
		switch {
		case res.req[i] >= 0:
			r := in.reqs[res.req[i]]
			f.Client = clientFrom(r, res.conf[i])
			f.Evidence = append(f.Evidence, fmt.Sprintf("client match %s: %s", res.conf[i], res.why[i]))
			if !in.at.IsZero() {
				f.Evidence = append(f.Evidence, fmt.Sprintf("request started %s before the capture", roundDuration(in.at.Sub(r.StartTime))))
			}
		case res.conf[i] == MatchAmbiguous:
			var cs []apf.Request
			for _, j := range res.candidates[i] {
				cs = append(cs, in.reqs[j])
			}
			for k, r := range cs {
				if k == maxCandidatesListed {
					f.Evidence = append(f.Evidence, fmt.Sprintf("%d more candidates not listed", len(cs)-k))
					break
				}
				f.Candidates = append(f.Candidates, toRequest(f.APIServer, r, in.at))
			}
			f.Client = commonClient(cs)
			f.Evidence = append(f.Evidence, "client match ambiguous: "+res.why[i])
		}
	}
}

func clientFrom(r apf.Request, match string) *Client {
	st := r.StartTime.UTC()
	c := &Client{
		User: r.User, Verb: r.Verb, Path: r.Path, Namespace: r.Namespace, Resource: r.Resource,
		APIVersion: r.APIVersion, PriorityLevel: r.PriorityLevel, FlowSchema: r.FlowSchema,
		Seats: r.Seats(), StartTime: &st, Match: match,
	}
	if c.User == "" {
		c.User = r.FlowDistinguisher
	}
	return c
}

// commonClient keeps the fields all candidates agree on.
func commonClient(cs []apf.Request) *Client {
	if len(cs) == 0 {
		return nil
	}
	c := clientFrom(cs[0], MatchAmbiguous)
	c.StartTime = nil
	for _, r := range cs[1:] {
		o := clientFrom(r, MatchAmbiguous)
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

// candidateUsers lists the users of the candidates, for messages.
func candidateUsers(f Finding) string {
	var us []string
	for _, c := range f.Candidates {
		us = append(us, c.User)
	}
	return strings.Join(us, ", ")
}
