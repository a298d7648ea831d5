package diagnosis

import (
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
