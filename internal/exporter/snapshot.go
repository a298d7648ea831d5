package exporter

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/watches"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
	"github.com/watch-doctor/watch-doctor/pkg/metrics"
)

// Other is the label value rows beyond a bound are folded into.
const Other = "other"

// States of watchdoctor_watches_by_state.
const (
	StateStuck       = "stuck"
	StateProgressing = "progressing"
	StateUndecided   = "undecided"
)

// instanceSnap is what one look exported of one instance. Immutable once
// published.
type instanceSnap struct {
	name string
	// pinned: the instance is read at its own address (a trace of it
	// and its samples reach one process).
	pinned bool
	// ok: every fetch of the look answered.
	ok bool
	// at is when the look ended; took how long it lasted.
	at   time.Time
	took time.Duration
	// pause is the growth of the server's non-GC pause histogram between
	// the look's first and last /metrics; nil when unknown.
	pause *metrics.PauseDelta
	// read: the APF dump was read, so the rows below are the answer (an
	// empty list means no watch initializing).
	read      bool
	resources []resourceRow
	levels    []levelRow
	users     []userRow
	// states is nil when nothing was decided.
	states map[string]int
	// undecided are the keys (requestKey) of the watches initializing
	// past the stall bound: those only a trace decides.
	undecided []string
	// carried: states are a trace's decision carried on (carry).
	carried bool
}

type resourceRow struct {
	resource, level string
	watches         int
	oldest          float64
}

type levelRow struct {
	level string
	seats int
	limit *float64
}

type userRow struct {
	user, resource string
	watches, seats int
	oldest         float64
}

// bounds are the cardinality bounds of Config.
type bounds struct{ users, resources, levels int }

// initializing are the watch requests of rs that hold their seats: a watch
// request executes until its initial events are sent (APF holds it until
// WatchInitialized, k8s.io/apiserver
// pkg/util/flowcontrol/apf_filter.go, the watch branch of Handle).
func initializing(rs *apf.Requests) []apf.Request {
	if rs == nil || !rs.HasDetails {
		return nil
	}
	var out []apf.Request
	for _, r := range rs.Requests {
		if r.Executing() && strings.EqualFold(r.Verb, "watch") {
			out = append(out, r)
		}
	}
	return out
}

// resourceOf names a request's resource as kubectl does: "pods",
// "deployments.apps", "jobs.batch/status".
func resourceOf(r apf.Request) string {
	res := r.Resource
	if p, ok := strings.CutPrefix(r.Path, "/apis/"); ok {
		if g, _, ok := strings.Cut(p, "/"); ok && g != "" {
			res += "." + g
		}
	}
	if r.Subresource != "" {
		res += "/" + r.Subresource
	}
	return res
}

func userOf(r apf.Request) string {
	if r.User != "" {
		return r.User
	}
	return r.FlowDistinguisher
}

// fill sets the rows of snap from one sample: the initializing watches per
// (resource, level) and per (user, resource), and the seats per level
// against its limit from /metrics.
func (snap *instanceSnap) fill(s watches.Sample, at time.Time, b bounds) {
	if s.Requests == nil || !s.Requests.HasDetails {
		return
	}
	snap.read = true
	byRes := map[[2]string]*resourceRow{}
	byUser := map[[2]string]*userRow{}
	seats := map[string]int{}
	for _, r := range initializing(s.Requests) {
		res, lvl, user := Label(resourceOf(r)), Label(r.PriorityLevel), Label(userOf(r))
		age := max(0, at.Sub(r.StartTime).Seconds())
		rr := byRes[[2]string{res, lvl}]
		if rr == nil {
			rr = &resourceRow{resource: res, level: lvl}
			byRes[[2]string{res, lvl}] = rr
		}
		rr.watches++
		rr.oldest = max(rr.oldest, age)
		ur := byUser[[2]string{user, res}]
		if ur == nil {
			ur = &userRow{user: user, resource: res}
			byUser[[2]string{user, res}] = ur
		}
		ur.watches++
		ur.seats += r.Seats()
		ur.oldest = max(ur.oldest, age)
		seats[lvl] += r.Seats()
	}
	snap.resources = foldResources(byRes, b.resources)
	snap.users = foldUsers(byUser, b.users)
	snap.levels = levelRows(seats, s.Metrics, b.levels)
}

func foldResources(m map[[2]string]*resourceRow, limit int) []resourceRow {
	add := func(a *resourceRow, b resourceRow) {
		a.watches += b.watches
		a.oldest = max(a.oldest, b.oldest)
	}
	return top(values(m), limit, func(a, b resourceRow) int {
		return cmp.Or(cmp.Compare(b.watches, a.watches), cmp.Compare(b.oldest, a.oldest), cmp.Compare(a.resource, b.resource), cmp.Compare(a.level, b.level))
	}, resourceRow{resource: Other, level: Other}, func(r resourceRow) [2]string { return [2]string{r.resource, r.level} }, add)
}

// foldUsers keeps the limit rows holding the most seats (then the oldest)
// and folds the rest into user="other", resource="other".
func foldUsers(m map[[2]string]*userRow, limit int) []userRow {
	add := func(a *userRow, b userRow) {
		a.watches += b.watches
		a.seats += b.seats
		a.oldest = max(a.oldest, b.oldest)
	}
	return top(values(m), limit, func(a, b userRow) int {
		return cmp.Or(cmp.Compare(b.seats, a.seats), cmp.Compare(b.oldest, a.oldest), cmp.Compare(a.user, b.user), cmp.Compare(a.resource, b.resource))
	}, userRow{user: Other, resource: Other}, func(r userRow) [2]string { return [2]string{r.user, r.resource} }, add)
}

func values[R any](m map[[2]string]*R) []R {
	out := make([]R, 0, len(m))
	for _, r := range m {
		out = append(out, *r)
	}
	return out
}

// top sorts rows by order and keeps the first limit, adding the rest into
// other, which is merged with a kept row of the same key.
func top[R any](rows []R, limit int, order func(a, b R) int, other R, key func(R) [2]string, add func(*R, R)) []R {
	slices.SortFunc(rows, order)
	if len(rows) <= limit {
		return rows
	}
	for _, r := range rows[limit:] {
		add(&other, r)
	}
	return merge(append(rows[:limit:limit], other), key, add)
}

// merge folds rows with equal keys into the first of them (a real user
// named "other" meeting the folded row), keeping the order.
func merge[R any](rows []R, key func(R) [2]string, add func(*R, R)) []R {
	at := map[[2]string]int{}
	out := rows[:0:0]
	for _, r := range rows {
		if i, ok := at[key(r)]; ok {
			add(&out[i], r)
			continue
		}
		at[key(r)] = len(out)
		out = append(out, r)
	}
	return out
}

// levelRows are the priority levels holding initializing watches or known
// from /metrics, by seats held, at most limit; the rest are folded into
// "other" (their limits summed).
func levelRows(seats map[string]int, m *watches.MetricsContext, limit int) []levelRow {
	byName := map[string]*levelRow{}
	for name, n := range seats {
		byName[name] = &levelRow{level: name, seats: n}
	}
	if m != nil {
		for name, ls := range m.Levels {
			if ls.Limit == nil {
				continue
			}
			name = Label(name)
			r := byName[name]
			if r == nil {
				r = &levelRow{level: name}
				byName[name] = r
			}
			v := *ls.Limit
			r.limit = &v
		}
	}
	add := func(a *levelRow, b levelRow) {
		a.seats += b.seats
		if b.limit != nil {
			v := *b.limit
			if a.limit != nil {
				v += *a.limit
			}
			a.limit = &v
		}
	}
	rows := make([]levelRow, 0, len(byName))
	for _, r := range byName {
		rows = append(rows, *r)
	}
	return top(rows, limit, func(a, b levelRow) int {
		return cmp.Or(cmp.Compare(b.seats, a.seats), cmp.Compare(a.level, b.level))
	}, levelRow{level: Other}, func(r levelRow) [2]string { return [2]string{r.level} }, add)
}
