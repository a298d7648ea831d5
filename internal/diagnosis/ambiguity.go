package diagnosis

import (
	"fmt"
	"slices"
	"strings"

	"github.com/watch-doctor/watch-doctor/pkg/apf"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

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
