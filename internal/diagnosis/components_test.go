package diagnosis

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

func TestUnionFind(t *testing.T) {
	u := newUnionFind(6)
	u.union(0, 1)
	u.union(2, 3)
	u.union(1, 3)
	sets := map[int][]int{}
	for x := range 6 {
		sets[u.find(x)] = append(sets[u.find(x)], x)
	}
	var got [][]int
	for x := range 6 {
		if s, ok := sets[u.find(x)]; ok {
			got = append(got, s)
			delete(sets, u.find(x))
		}
	}
	if diff := cmp.Diff([][]int{{0, 1, 2, 3}, {4}, {5}}, got); diff != "" {
		t.Errorf("sets (-want +got):\n%s", diff)
	}
}

// nested decides by counting: a watcher alone between two tight points is
// forced; watchers sharing a block are ambiguous among its requests, with
// a lead by goroutine id when the order fits the ages.
func TestNested(t *testing.T) {
	at := t0.Add(time.Hour)
	req := func(user string, age time.Duration) apf.Request {
		r := watchRequest(user, at.Add(-age))
		return r
	}
	in := matchInput{
		// Waits 30, 5, 5 minutes: the 30-minute watcher alone can take the
		// 40-minute request; the two 5-minute ones share the other two.
		watchers: []api.Watcher{initialWatcher(300, 30), initialWatcher(100, 5), initialWatcher(200, 5)},
		reqs:     []apf.Request{req("late", 6*time.Minute), req("old", 40*time.Minute), req("early", 7*time.Minute)},
		at:       at, details: true,
	}
	in.reqs[2].ArriveTime = in.reqs[0].ArriveTime.Add(-time.Minute)
	res := matchClients(in)
	type row struct {
		Conf  api.Match
		Req   int
		Cands []int
		Hint  int
	}
	var got []row
	for _, p := range res.pairs {
		got = append(got, row{p.conf, p.req, p.candidates, p.hint})
	}
	want := []row{
		{api.MatchExact, 1, nil, -1},
		// Handler ids 0 and 100 (initialWatcher: id-100): the earlier
		// arrival ("early", request 2) leads for the smaller id.
		{api.MatchAmbiguous, -1, []int{2, 0}, 2},
		{api.MatchAmbiguous, -1, []int{2, 0}, 0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pairings (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]bool{true, true, true}, res.used); diff != "" {
		t.Errorf("used (-want +got):\n%s", diff)
	}
}

// general, for watchers of several object types sharing resources: a
// watcher with one possible request is forced to it.
func TestGeneral(t *testing.T) {
	at := t0.Add(time.Hour)
	in := matchInput{
		watchers: []api.Watcher{typed(10, 1, "0xa"), typed(20, 1, "0xb")},
		reqs:     []apf.Request{resourceRequest("p", "pods", t0), resourceRequest("c", "configmaps", t0)},
		at:       at, details: true,
	}
	res := matchClients(in)
	for i, p := range res.pairs {
		if p.conf != api.MatchAmbiguous || p.nCand != 2 {
			t.Errorf("watcher %d: %s with %d candidates, want ambiguous between the two (equal counts separate nothing)", i, p.conf, p.nCand)
		}
	}
	in.reqs[1].StartTime = at.Add(-30 * time.Second) // too young for a 1-minute wait
	res = matchClients(in)
	if p := res.pairs[0]; p.conf != api.MatchExact || p.req != 0 {
		t.Errorf("watcher 0: %s request %d, want exact 0 (the only one old enough)", p.conf, p.req)
	}
}

// generalBefore is general as it was before issue 29, a pass over every
// request old enough for each watcher: quadratic in a storm, kept here
// only as the reference the faster one must agree with.
func (m *matcher) generalBefore(res *matchResult, cp *component) {
	byRes := map[int][]int{}
	for _, j := range cp.rs {
		byRes[m.rres[j]] = append(byRes[m.rres[j]], j)
	}
	resOf := map[int][]int{}
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

// general decides every component exactly as the quadratic pass did:
// random components of watchers of three object types (and unknown
// ones) with waits of 0 to 3 minutes, and requests of four resources of
// ages 0 to 4 minutes by two or three users, each resource allowed a
// random set of the types.
func TestGeneralAgreesWithThePassPerWatcher(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 2))
	at := t0.Add(time.Hour)
	types := []string{"0xa", "0xb", "0xc", ""}
	resources := []string{"pods", "configmaps", "secrets", "services"}
	for k := range 300 {
		nw, nr := 1+rng.IntN(30), 1+rng.IntN(30)
		in := matchInput{at: at, details: true}
		for i := range nw {
			in.watchers = append(in.watchers, typed(int64(100+i), rng.IntN(4), types[rng.IntN(len(types))]))
		}
		for range nr {
			started := at.Add(-time.Duration(rng.IntN(5)) * time.Minute)
			in.reqs = append(in.reqs, resourceRequest(fmt.Sprintf("u%d", rng.IntN(2+k%2)), resources[rng.IntN(len(resources))], started))
		}
		m := newMatcher(in, true)
		for r := range m.allowed {
			var cs []int
			for _, c := range m.allClasses() {
				if rng.IntN(2) == 0 {
					cs = append(cs, c)
				}
			}
			m.allowed[r] = cs
		}
		cp := &component{}
		for i := range in.watchers {
			cp.ws = append(cp.ws, i)
		}
		for j := range in.reqs {
			cp.rs = append(cp.rs, j)
		}
		fresh := func() *matchResult {
			res := &matchResult{pairs: make([]pairing, nw), used: make([]bool, nr)}
			for i := range res.pairs {
				res.pairs[i].req, res.pairs[i].hint = -1, -1
			}
			return res
		}
		want, got := fresh(), fresh()
		m.generalBefore(want, cp)
		m.general(got, cp)
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(matchResult{}, pairing{})); diff != "" {
			t.Fatalf("case %d: %d watchers, %d requests (-before +now):\n%s", k, nw, nr, diff)
		}
	}
}
