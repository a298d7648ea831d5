package watches

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/watch-doctor/watch-doctor/pkg/apf"
)

// matchClients attributes executing watch requests (APF) to the
// initial-phase watchers of one dump and fills the Client of the findings
// among them. It returns the indexes of reqs attributed to a watcher.
//
// Every watcher in its initial phase holds one executing APF request: APF
// keeps a watch executing until WatchInitialized, which process() signals
// after the replay (cache_watcher.go:521). A request fits a watcher when it
// is at least as old as the watcher has been blocked: age = capture time -
// StartTime >= wait - slack. Then:
//   - exact: after removing requests that are the only fit of another
//     watcher, exactly one request fits;
//   - likely: a group of n watchers and n requests that all fit each other
//     is paired in order, handler goroutine id against arrival time. Ids
//     grow with creation time but are handed out to each P in batches of
//     16 (runtime/proc.go, _GoidCacheBatch), so order is a heuristic;
//   - ambiguous: anything else; the candidates are listed.
func matchClients(findings []*Finding, watchers []Watcher, reqs []apf.Request, at time.Time, slack time.Duration, d *Dump) map[int]bool {
	used := map[int]bool{}
	if len(watchers) == 0 {
		return used
	}
	fits := func(w Watcher, r apf.Request) bool {
		if at.IsZero() || w.WaitMinutes == 0 {
			return true
		}
		return at.Sub(r.StartTime) >= time.Duration(w.WaitMinutes)*time.Minute-slack
	}
	cand := make([][]int, len(watchers))
	for i, w := range watchers {
		for j, r := range reqs {
			if fits(w, r) {
				cand[i] = append(cand[i], j)
			}
		}
	}
	assigned := make([]int, len(watchers))
	conf := make([]string, len(watchers))
	why := make([]string, len(watchers))
	for i := range assigned {
		assigned[i] = -1
	}
	// Elimination: a watcher with a single remaining fit takes it.
	taken := map[int]bool{}
	for changed := true; changed; {
		changed = false
		for i := range watchers {
			if assigned[i] >= 0 {
				continue
			}
			var left []int
			for _, j := range cand[i] {
				if !taken[j] {
					left = append(left, j)
				}
			}
			if len(left) == 1 {
				assigned[i], conf[i] = left[0], MatchExact
				taken[left[0]] = true
				why[i] = exactWhy(len(cand[i]), len(reqs), at)
				changed = true
			}
		}
	}
	// Group the rest into components of watchers sharing candidates.
	parent := map[string]string{}
	var find func(string) string
	find = func(x string) string {
		if parent[x] == "" || parent[x] == x {
			parent[x] = x
			return x
		}
		root := find(parent[x])
		parent[x] = root
		return root
	}
	union := func(a, b string) { parent[find(a)] = find(b) }
	for i := range watchers {
		if assigned[i] >= 0 {
			continue
		}
		find(fmt.Sprintf("w%d", i))
		for _, j := range cand[i] {
			if !taken[j] {
				union(fmt.Sprintf("w%d", i), fmt.Sprintf("r%d", j))
			}
		}
	}
	groups := map[string]struct{ ws, rs []int }{}
	for i := range watchers {
		if assigned[i] >= 0 {
			continue
		}
		g := groups[find(fmt.Sprintf("w%d", i))]
		g.ws = append(g.ws, i)
		groups[find(fmt.Sprintf("w%d", i))] = g
	}
	for j := range reqs {
		if taken[j] {
			continue
		}
		if _, ok := parent[fmt.Sprintf("r%d", j)]; !ok {
			continue
		}
		root := find(fmt.Sprintf("r%d", j))
		if g, ok := groups[root]; ok {
			g.rs = append(g.rs, j)
			groups[root] = g
		}
	}
	for _, g := range groups {
		if len(g.rs) == 0 {
			continue
		}
		ws := append([]int(nil), g.ws...)
		rs := append([]int(nil), g.rs...)
		sort.Slice(ws, func(a, b int) bool { return orderKey(watchers[ws[a]]) < orderKey(watchers[ws[b]]) })
		sort.Slice(rs, func(a, b int) bool { return reqs[rs[a]].ArriveTime.Before(reqs[rs[b]].ArriveTime) })
		ordered := len(ws) == len(rs) && len(ws) > 1 && d.HasParentIDs
		for k := 0; ordered && k < len(ws); k++ {
			if !fits(watchers[ws[k]], reqs[rs[k]]) {
				ordered = false
			}
		}
		if len(ws) == 1 && len(rs) == 1 {
			ordered = true
		}
		for k, i := range ws {
			if ordered {
				assigned[i], conf[i] = rs[k], MatchLikely
				taken[rs[k]] = true
				why[i] = fmt.Sprintf("%d watchers and %d executing watch requests fit each other; paired by order (handler goroutine id against request arrival time), which follows arrival in practice but is not guaranteed: goroutine ids are handed out per P in batches", len(ws), len(rs))
				continue
			}
			conf[i] = MatchAmbiguous
			why[i] = fmt.Sprintf("%d executing watch requests fit and nothing separates them", len(rs))
		}
		if !ordered {
			for _, i := range ws {
				cand[i] = rs
			}
		}
	}
	for i, w := range watchers {
		f := findingFor(findings, w.GoroutineID)
		if assigned[i] >= 0 {
			used[assigned[i]] = true
		}
		if f == nil {
			continue
		}
		switch {
		case assigned[i] >= 0:
			f.Client = clientFrom(reqs[assigned[i]], conf[i])
			f.Evidence = append(f.Evidence, fmt.Sprintf("client match %s: %s", conf[i], why[i]))
			if !at.IsZero() {
				f.Evidence = append(f.Evidence, fmt.Sprintf("request started %s before the capture", roundDuration(at.Sub(reqs[assigned[i]].StartTime))))
			}
		case conf[i] == MatchAmbiguous:
			var cs []apf.Request
			for _, j := range cand[i] {
				cs = append(cs, reqs[j])
				f.Candidates = append(f.Candidates, toRequest(f.APIServer, reqs[j], at))
			}
			f.Client = commonClient(cs)
			f.Evidence = append(f.Evidence, "client match ambiguous: "+why[i])
		}
	}
	return used
}

func orderKey(w Watcher) int64 {
	if w.Handler != nil {
		return w.Handler.GoroutineID
	}
	return w.GoroutineID
}

func exactWhy(fit, total int, at time.Time) string {
	if total == 1 {
		return "the APF dump lists exactly one executing watch request"
	}
	if at.IsZero() {
		return fmt.Sprintf("the only executing watch request of %d left after the others were attributed", total)
	}
	if fit == 1 {
		return fmt.Sprintf("the only one of %d executing watch requests old enough for the watcher's wait", total)
	}
	return fmt.Sprintf("the only fitting one of %d executing watch requests left after the others were attributed", total)
}

func findingFor(fs []*Finding, id int64) *Finding {
	for _, f := range fs {
		if f.Watcher.GoroutineID == id {
			return f
		}
	}
	return nil
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
