package diagnosis

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/watches"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/trace"
)

// traceVerdict is what the trace proved of one watch-path goroutine.
type traceVerdict int

const (
	verdictNone traceVerdict = iota
	// verdictStuck: an initial-phase watcher in sendWatchCacheEvent with
	// no state change in the window it was seen.
	verdictStuck
	// verdictProgressing: an initial-phase watcher that changed state.
	verdictProgressing
	// verdictCacheWait: a request waiting for its watch cache.
	verdictCacheWait
	// verdictUnknown: an initial-phase watcher that did not change state
	// but was not in sendWatchCacheEvent: nothing proves it stuck.
	verdictUnknown
)

// traceWatches is step 1, per goroutine: the trace's initial-phase
// watchers and cache waits still there at the window's end, each with
// its verdict, and the watchers that finished their replay in the window.
type traceWatches struct {
	stuck, progressing, cacheWait, unknown []watches.TraceGoroutine
	finished                               int
}

func (tw traceWatches) total() int {
	return len(tw.stuck) + len(tw.progressing) + len(tw.cacheWait) + len(tw.unknown)
}

func judgeTraceGoroutines(t *watches.Trace) traceWatches {
	var tw traceWatches
	for _, g := range t.Goroutines {
		gone := g.EndState == trace.StateNotExist
		switch {
		case g.Class == watches.TraceCacheWait && !gone:
			tw.cacheWait = append(tw.cacheWait, g)
		case g.Class != watches.TraceWatcher:
		case gone || g.Phase != api.PhaseInitial:
			tw.finished++
		case g.Transitions == 0 && g.InSend:
			tw.stuck = append(tw.stuck, g)
		case g.Transitions > 0:
			tw.progressing = append(tw.progressing, g)
		default:
			tw.unknown = append(tw.unknown, g)
		}
	}
	return tw
}

// traceRow is an executing watch row of sample B, and whether sample A
// listed it too (then it executed through the whole window).
type traceRow struct {
	req     apf.Request
	inA     bool
	verdict traceVerdict
	why     string // what decided it, for its finding's evidence
}

// requestKey identifies one request across two APF dumps (rowKey).
type requestKey struct {
	level, schema, user, verb, path string
	sec                             int64 // StartTime: Unix seconds (exact for any year) and nanoseconds
	nsec                            int
}

// rowKey is the requestKey of r: a comparable value, built without
// formatting or allocating.
func rowKey(r apf.Request) requestKey {
	return requestKey{level: r.PriorityLevel, schema: r.FlowSchema, user: r.User, verb: r.Verb, path: r.Path, sec: r.StartTime.Unix(), nsec: r.StartTime.Nanosecond()}
}

// traceRows is step 2: the rows of B, marked when A had them, and how many
// rows of A stopped executing before B (those are not stuck).
func traceRows(a, b *apf.Requests) (rows []traceRow, stopped int) {
	inA := map[requestKey]bool{}
	for _, r := range executingWatches(a) {
		inA[rowKey(r)] = true
	}
	wb := executingWatches(b)
	inB := make(map[requestKey]bool, len(wb))
	if len(wb) > 0 {
		rows = make([]traceRow, 0, len(wb))
	}
	for _, r := range wb {
		k := rowKey(r)
		inB[k] = true
		rows = append(rows, traceRow{req: r, inA: a == nil || inA[k]})
	}
	for k := range inA {
		if !inB[k] {
			stopped++
		}
	}
	return rows, stopped
}

// eliminate is step 3: it decides rows by elimination only, never by
// goroutine-id order. Each rule marks rows and returns the watchers of
// each verdict it left to place; it reports the rules that decided.
func eliminate(rows []traceRow, tw traceWatches, zeroDelta map[string]bool) (left map[traceVerdict]int, rules []string) {
	left = map[traceVerdict]int{verdictStuck: len(tw.stuck), verdictProgressing: len(tw.progressing),
		verdictCacheWait: len(tw.cacheWait), verdictUnknown: len(tw.unknown)}
	if r := allOneClass(rows, left, "every initial-phase watch in the trace has the same verdict"); r != "" {
		return left, []string{r}
	}
	// Per resource: no event written to any client of it over the window
	// means none of its rows that executed throughout made progress.
	if left[verdictCacheWait] == 0 && len(zeroDelta) > 0 {
		var marked []string
		for i := range rows {
			rw := &rows[i]
			if rw.verdict != verdictNone || !rw.inA || !zeroDelta[resourceKey(rw.req)] || left[verdictStuck] == 0 {
				continue
			}
			rw.verdict, rw.why = verdictStuck, fmt.Sprintf("apiserver_watch_events_total{resource=%q} did not grow over the window: no handler of %s wrote an event, so this request, executing throughout, made no progress", rw.req.Resource, rw.req.Resource)
			left[verdictStuck]--
			marked = append(marked, rw.req.Resource)
		}
		if len(marked) > 0 {
			slices.Sort(marked)
			rules = append(rules, fmt.Sprintf("per resource, no watch event written over the window (%s): %d rows stuck", strings.Join(slices.Compact(marked), ", "), len(marked)))
		}
	}
	if r := allOneClass(rows, left, "the rows left after the per-resource rule have one verdict"); r != "" {
		rules = append(rules, r)
	}
	return left, rules
}

// allOneClass decides every undecided row when the watchers left to place
// are exactly as many as those rows and share one verdict.
func allOneClass(rows []traceRow, left map[traceVerdict]int, why string) string {
	open := 0
	for _, rw := range rows {
		if rw.verdict == verdictNone {
			open++
		}
	}
	if open == 0 {
		return ""
	}
	var only traceVerdict
	for v, n := range left {
		switch {
		case n == 0:
		case only != verdictNone:
			return ""
		default:
			only = v
		}
	}
	if only == verdictNone || only == verdictUnknown || left[only] != open {
		return ""
	}
	for i := range rows {
		if rows[i].verdict == verdictNone {
			rows[i].verdict, rows[i].why = only, fmt.Sprintf("%s (%s), as many as the undecided executing watch rows (%d)", why, verdictName(only), open)
		}
	}
	left[only] = 0
	return fmt.Sprintf("%s: %d rows %s", why, open, verdictName(only))
}

func verdictName(v traceVerdict) string {
	switch v {
	case verdictStuck:
		return "stuck"
	case verdictProgressing:
		return "progressing"
	case verdictCacheWait:
		return "waiting for the watch cache"
	}
	return "undecided"
}

// goroutineEvidence is what the trace shows of one goroutine.
func goroutineEvidence(g watches.TraceGoroutine, window time.Duration) string {
	seen := g.Observed(window)
	switch {
	case g.Class == watches.TraceCacheWait:
		return fmt.Sprintf("goroutine %d waits for its watch cache (%s): no replay has begun; state %s, %d state changes in %s", g.ID, watches.CacheWaitFunc(g.Stack), g.EndState, g.Transitions, roundDuration(seen))
	case g.Transitions == 0:
		return fmt.Sprintf("goroutine %d in sendWatchCacheEvent from %s: no state change in %s (%s, since %s into the trace)", g.ID, watches.ReplayLoop(g.Stack), roundTenth(seen), g.EndState, roundTenth(g.FirstSeen))
	}
	s := fmt.Sprintf("goroutine %d in the initial-events replay: woken %d times, longest gap %s, %d state changes in %s", g.ID, g.Wakeups, roundTenth(g.LongestGap), g.Transitions, roundTenth(seen))
	if len(g.WokenBy) > 0 {
		var by []string
		for _, w := range g.WokenBy {
			by = append(by, fmt.Sprintf("goroutine %d (%d times)", w.ID, w.Count))
		}
		s += "; woken by " + strings.Join(by, ", ")
	}
	return s
}

// roundTenth rounds to a tenth of a second (whole seconds from 10 s).
func roundTenth(d time.Duration) string {
	if d >= 10*time.Second {
		return roundDuration(d)
	}
	return d.Round(100 * time.Millisecond).String()
}
