package diagnosis

import (
	"sort"
	"strings"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/watches"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// executingWatches are the requests that can hold a watcher's seats: the
// executing watches, or, when the dump names no verbs (no
// includeRequestDetails), every executing request outside the exempt
// level (exempt requests hold no seats).
//
// When every row is one (a relist storm), it is rs.Requests itself,
// capped so that an append copies: not a copy of 50,000 rows per call.
// Callers do not change the rows.
func executingWatches(rs *apf.Requests) []apf.Request {
	if rs == nil {
		return nil
	}
	all := rs.Requests[:len(rs.Requests):len(rs.Requests)]
	for i := range all {
		if !holdsSeats(rs, &all[i]) {
			out := make([]apf.Request, i, len(all))
			copy(out, all[:i])
			for j := i + 1; j < len(all); j++ {
				if holdsSeats(rs, &all[j]) {
					out = append(out, all[j])
				}
			}
			return out
		}
	}
	return all
}

// holdsSeats reports whether r, a row of rs, is one executingWatches
// keeps.
func holdsSeats(rs *apf.Requests, r *apf.Request) bool {
	switch {
	case !r.Executing():
		return false
	case rs.HasDetails:
		return strings.EqualFold(r.Verb, "watch")
	default:
		return r.PriorityLevel != "exempt"
	}
}

func toRequest(server string, r apf.Request, at time.Time) api.Request {
	out := api.Request{
		APIServer: server, User: r.User, Verb: r.Verb, Path: r.Path, Namespace: r.Namespace,
		Resource: r.Resource, PriorityLevel: r.PriorityLevel, FlowSchema: r.FlowSchema,
		Seats: r.Seats(), StartTime: r.StartTime.UTC(),
	}
	if out.User == "" {
		out.User = r.FlowDistinguisher
	}
	if !at.IsZero() {
		age := int(at.Sub(r.StartTime) / time.Second)
		out.AgeSeconds = &age
	}
	return out
}

func priorityLevels(server string, findings []*api.Finding, cur watches.Sample) []api.PriorityLevel {
	byName := map[string]*api.PriorityLevel{}
	get := func(name string) *api.PriorityLevel {
		if p, ok := byName[name]; ok {
			return p
		}
		p := &api.PriorityLevel{APIServer: server, Name: name}
		byName[name] = p
		return p
	}
	for _, f := range findings {
		if f.Type != api.StuckInitialEvents || f.Client == nil || f.Client.PriorityLevel == "" {
			continue
		}
		p := get(f.Client.PriorityLevel)
		if f.SeatsKnown() {
			p.StuckSeats += f.Client.Seats
		}
	}
	for name, p := range byName {
		if cur.Metrics != nil {
			if ls, ok := cur.Metrics.Levels[name]; ok {
				p.ExecutingSeats, p.LimitSeats = ls.Executing, ls.Limit
			}
		}
		for _, l := range cur.Levels {
			if l.Name == name {
				n := l.ExecutingRequests
				p.ExecutingRequests = &n
			}
		}
	}
	out := make([]api.PriorityLevel, 0, len(byName))
	for _, p := range byName {
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
