package diagnosis

import (
	"fmt"
	"math"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/watches"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// EvidenceTrace and EvidenceDump name the evidence a server's verdicts
// rest on, in the note that says which decided.
const (
	EvidenceTrace = "execution trace"
	EvidenceDump  = "debug=2 dumps"
)

// FormatTrace is APIServer.DumpFormat for a server decided from an
// execution trace with no goroutine dump beside it.
const FormatTrace = "trace"

// traceChoice says whether s is decided from its execution trace alone,
// and why (the note the report carries either way). A debug=2 dump stays
// the first choice for tying watchers to requests: it carries parent ids,
// itab words and the event each watcher waits on, which a trace has none
// of; the trace then decides stuck or progressing per goroutine
// (refineWithTrace), so the verdict is never weaker than either alone.
// Without a debug=2 dump (a debug=1 or protobuf profile, or none) the
// trace decides alone.
func traceChoice(s watches.Server, last int) (useTrace bool, note string) {
	if s.Trace == nil {
		return false, ""
	}
	if last >= 0 && !s.Samples[last].Dump.Aggregated() {
		return false, fmt.Sprintf("evidence: %s tie watchers to requests (parent ids, itab words, events); the %s %s (%s window) decides stuck or progressing per goroutine", EvidenceDump, EvidenceTrace, s.Trace.Source, roundTenth(s.Trace.Window))
	}
	why := "no debug=2 dump"
	if last >= 0 {
		why = fmt.Sprintf("the %s profile cannot tell stuck from slow", s.Samples[last].Dump.Format)
	}
	return true, fmt.Sprintf("evidence: %s %s (%s window, %d bytes): %s; the trace shows per goroutine who made progress", EvidenceTrace, s.Trace.Source, roundTenth(s.Trace.Window), s.Trace.Bytes, why)
}

// diagnoseTrace decides the initial-phase watches of s from its trace and
// the APF rows of its first and last samples (A, before the trace; B,
// after it), and returns the server's info with its notes, and the
// findings, warnings and what stayed undecided it adds.
func diagnoseTrace(info api.APIServer, s watches.Server, note string) (api.APIServer, added) {
	t := s.Trace
	var out added
	info.Notes = append(info.Notes, note)
	a, b := traceSamples(s.Samples)
	if b == nil {
		info.Notes = append(info.Notes, "no sample beside the trace: no APF rows to tie its watchers to")
		b = &watches.Sample{}
	}
	if !b.CapturedAt.IsZero() {
		at := b.CapturedAt.UTC()
		info.CapturedAt = &at
	}
	info.DumpFormat = FormatTrace
	if b.Dump != nil {
		info.DumpFormat, info.Goroutines = b.Dump.Format, b.Dump.Goroutines
	} else if m := b.Metrics; m != nil && m.Goroutines != nil {
		info.Goroutines = int(*m.Goroutines)
	}
	addMetricsInfo(&info, b.Metrics)
	if t.Truncated {
		out.warnings = append(out.warnings, fmt.Sprintf("%s: %s: verdicts cover the %s read", s.Name, t.Why, roundTenth(t.Window)))
	}
	if t.StoppedEarly {
		info.Notes = append(info.Notes, fmt.Sprintf("trace stopped after %s: %s", roundTenth(t.Window), t.Why))
	}
	if t.Dropped > 0 {
		out.incomplete = append(out.incomplete, fmt.Sprintf("%s: the trace holds at least %d watch-path goroutines: the parser keeps %d, so every count from the trace is a lower bound, and the watches of the %d past its bound are not decided", s.Name, len(t.Goroutines)+t.Dropped, len(t.Goroutines), t.Dropped))
	}
	tw := judgeTraceGoroutines(t)
	info.InitialPhase = tw.total() - len(tw.cacheWait)
	var reqsA *apf.Requests
	if a != nil {
		reqsA = a.Requests
	}
	rows, stopped := traceRows(reqsA, b.Requests)
	if stopped > 0 {
		info.Notes = append(info.Notes, fmt.Sprintf("%d watch requests executing in the first sample had stopped by the last: not stuck", stopped))
	}
	if tw.finished > 0 {
		info.Notes = append(info.Notes, fmt.Sprintf("%d watchers finished their initial events during the trace", tw.finished))
	}
	var zero map[string]bool
	if a != nil {
		zero = zeroDeltaResources(a.Metrics, b.Metrics)
	}
	left, rules := eliminate(rows, tw, zero)
	for _, rule := range rules {
		info.Notes = append(info.Notes, "decided by elimination: "+rule)
	}
	tf := traceFindings{server: s.Name, t: t, tw: tw, at: b.CapturedAt}
	fs := tf.decidedRows(rows)
	fs = append(fs, tf.open(rows, left)...)
	if b.Requests == nil && len(fs) > 0 {
		out.warnings = append(out.warnings, fmt.Sprintf("%s: no APF dump_requests beside the trace: findings name no client", s.Name))
	}
	if n := len(tw.unknown); n > 0 {
		out.incomplete = append(out.incomplete, fmt.Sprintf("%s: %d initial-phase watchers made no state change in the trace but were not sending an event: stuck or not is not decided", s.Name, n))
	}
	if extra := countOpen(rows) - (left[verdictStuck] + left[verdictProgressing] + left[verdictCacheWait] + left[verdictUnknown]); extra > 0 {
		out.incomplete = append(out.incomplete, fmt.Sprintf("%s: %d executing watch requests have no initial-phase watcher in the trace (it ended, was cut, the request started after it, or its watcher loop has a shape this build does not recognise): not decided", s.Name, extra))
		fs = append(fs, watcherlessRows(s.Name, t, rows, extra, b.CapturedAt)...)
	}
	out.levels = priorityLevels(s.Name, fs, *b)
	out.findings = fs
	info.Watchers = tw.total() + tw.finished
	return info, out
}

// traceSamples are sample A (the first with an APF dump) and sample B
// (the last); a is nil when only one sample has one.
func traceSamples(ss []watches.Sample) (a, b *watches.Sample) {
	for i := range ss {
		if ss[i].Requests == nil {
			continue
		}
		if a == nil {
			a = &ss[i]
		}
		b = &ss[i]
	}
	if a == b {
		a = nil
	}
	if b == nil && len(ss) > 0 {
		b = &ss[len(ss)-1]
	}
	return a, b
}

// zeroDeltaResources are the group/resources whose
// apiserver_watch_events_total did not grow between A and B (both read,
// same process).
func zeroDeltaResources(a, b *watches.MetricsContext) map[string]bool {
	if a == nil || b == nil || a.WatchEvents == nil || b.WatchEvents == nil {
		return nil
	}
	if a.ProcessStartTime == nil || b.ProcessStartTime == nil || *a.ProcessStartTime != *b.ProcessStartTime {
		return nil
	}
	out := map[string]bool{}
	for k, after := range b.WatchEvents {
		before, ok := a.WatchEvents[k]
		if ok && !math.IsNaN(before) && !math.IsNaN(after) && after == before {
			out[k] = true
		}
	}
	return out
}

// watcherlessRows fails closed on the extra open rows of a trace, those
// no watcher of the trace accounts for: one UndecidedInitialEvents
// finding each, naming the row when one is past StallBound, else listing
// the open rows past it as candidates ("k of these n").
func watcherlessRows(server string, t *watches.Trace, rows []traceRow, extra int, at time.Time) []*api.Finding {
	var pool []apf.Request
	for _, rw := range rows {
		if rw.verdict == verdictNone {
			pool = append(pool, rw.req)
		}
	}
	pool = initializingLonger(pool, at)
	var out []*api.Finding
	for n := 0; n < extra && n < len(pool); n++ {
		why := fmt.Sprintf("stuck or slow: not decided: %d of these %d executing watch requests have no initial-phase watcher in the trace", extra, len(pool))
		f := undecidedFinding(server, pool[n], at, why)
		f.UndecidedReason = api.UndecidedNoRecognisedWatcher
		f.Evidence = append(f.Evidence, fmt.Sprintf("not decided by the %s %s (%s window): no initial-phase watcher of it is left for this request", EvidenceTrace, t.Source, roundTenth(t.Window)))
		if len(pool) > 1 {
			f.Client = commonClient(pool)
			f.Evidence = f.Evidence[1:]
			for _, rq := range pool {
				c := toRequest(server, rq, at)
				f.Candidates = append(f.Candidates, c)
				f.Evidence = append(f.Evidence, fmt.Sprintf("APF dump_requests: executing watch of %s started %s, %s before the capture", c.User, c.StartTime.Format(time.RFC3339), roundDuration(at.Sub(rq.StartTime))))
			}
		}
		out = append(out, f)
	}
	return out
}

func countOpen(rows []traceRow) int {
	n := 0
	for _, rw := range rows {
		if rw.verdict == verdictNone {
			n++
		}
	}
	return n
}

// traceFindings builds the findings of one server's trace.
type traceFindings struct {
	server string
	t      *watches.Trace
	tw     traceWatches
	at     time.Time
}

// of returns the goroutines of a verdict.
func (tf traceFindings) of(v traceVerdict) []watches.TraceGoroutine {
	switch v {
	case verdictStuck:
		return tf.tw.stuck
	case verdictProgressing:
		return tf.tw.progressing
	case verdictCacheWait:
		return tf.tw.cacheWait
	}
	return tf.tw.unknown
}

// finding is the finding of one watch of verdict v; gs are the goroutines
// it may be (one: it is that one).
func (tf traceFindings) finding(v traceVerdict, gs []watches.TraceGoroutine) *api.Finding {
	f := &api.Finding{APIServer: tf.server, Phase: api.PhaseInitial, GoroutineIDs: []int64{}}
	window := roundTenth(tf.t.Window)
	switch v {
	case verdictStuck:
		f.Type, f.Severity = api.StuckInitialEvents, api.SeverityCritical
		f.Message = fmt.Sprintf("stuck replaying initial events: its watcher made no state change in the %s traced, so it sent nothing (stuck for at least that long); nothing frees it before the request ends", window)
		if tf.t.Window < StallBound {
			f.Message += fmt.Sprintf("; the window is shorter than the %s no-progress bound of the proposed fix (kubernetes PR 141899)", StallBound)
		} else {
			f.Message += fmt.Sprintf(", past the %s no-progress bound of the proposed fix (kubernetes PR 141899)", StallBound)
		}
	case verdictProgressing:
		f.Type, f.Severity = api.SlowInitialEvents, api.SeverityInfo
		f.Message = fmt.Sprintf("replaying initial events and progressing: its watcher was woken during the %s traced", window)
	case verdictCacheWait:
		f.Type, f.Severity = api.WaitingForWatchCache, api.SeverityWarning
		f.Message = "waiting for its watch cache to be ready: no replay has begun; it holds its APF seats meanwhile"
	}
	if len(gs) == 1 {
		g := gs[0]
		f.GoroutineIDs = []int64{g.ID}
		f.Watcher = api.Watcher{GoroutineID: g.ID, Phase: g.Phase, InSend: g.InSend, Blocked: g.InSend && g.EndState == "waiting", State: string(g.EndState)}
		if m := int(g.Observed(tf.t.Window) / time.Minute); v == verdictStuck && m >= 1 {
			f.BlockedMinutes = &m
		}
	}
	f.Evidence = append(f.Evidence, fmt.Sprintf("decided by the %s %s (%s window)", EvidenceTrace, tf.t.Source, window))
	listed := gs
	switch {
	case len(gs) > maxCandidatesListed:
		// Each of the watches a verdict leaves open gets this list: capped,
		// so that n of them cost O(n) lines, not O(n^2).
		listed = gs[:maxCandidatesListed]
		f.Evidence = append(f.Evidence, fmt.Sprintf("one of %d goroutines, the first %d below: which one serves this request, a trace cannot tell (it has no arguments and no parents)", len(gs), len(listed)))
	case len(gs) > 1:
		f.Evidence = append(f.Evidence, fmt.Sprintf("one of the %d goroutines below: which one serves this request, a trace cannot tell (it has no arguments and no parents)", len(gs)))
	}
	for _, g := range listed {
		f.Evidence = append(f.Evidence, goroutineEvidence(g, tf.t.Window))
	}
	return f
}

// decidedRows are the findings of the rows elimination decided: named
// exactly.
func (tf traceFindings) decidedRows(rows []traceRow) []*api.Finding {
	var out []*api.Finding
	for _, rw := range rows {
		if rw.verdict == verdictNone {
			continue
		}
		f := tf.finding(rw.verdict, tf.of(rw.verdict))
		f.Client = clientFrom(rw.req, api.MatchExact)
		f.Evidence = append(f.Evidence, "client match exact: "+rw.why)
		if !tf.at.IsZero() {
			f.Evidence = append(f.Evidence, fmt.Sprintf("request started %s before the last sample", roundDuration(tf.at.Sub(rw.req.StartTime))))
		}
		out = append(out, f)
	}
	return out
}

// open are the findings of the watchers elimination left: each may be any
// of the undecided rows ("k of these n"). A progressing watcher is never
// named alone: with one row left it names none.
func (tf traceFindings) open(rows []traceRow, left map[traceVerdict]int) []*api.Finding {
	var pool []apf.Request
	for _, rw := range rows {
		if rw.verdict == verdictNone {
			pool = append(pool, rw.req)
		}
	}
	var list candidateList
	if len(pool) > 1 {
		list = newCandidateList(tf.server, pool, tf.at, nil)
	}
	var out []*api.Finding
	for _, v := range []traceVerdict{verdictStuck, verdictProgressing, verdictCacheWait} {
		gs := tf.of(v)
		if left[v] == 0 {
			continue
		}
		for i := 0; i < left[v]; i++ {
			mine := gs
			if left[v] == len(gs) {
				mine = gs[i : i+1] // no rule placed any of them: each is its own
			}
			f := tf.finding(v, mine)
			switch {
			case len(pool) == 0:
				f.Evidence = append(f.Evidence, "no executing watch request is left for it in the APF dump")
			case len(pool) == 1:
				// More watchers than rows are left: the row may be any
				// watcher's, of any verdict.
				f.Evidence = append(f.Evidence, "one executing watch request is left for several watchers: it is not named, as it may be another watcher's")
			default:
				list.apply(f)
				// More watchers than rows: no more rows than there are
				// are theirs (clampToAPF counts as many).
				f.Evidence = append(f.Evidence, fmt.Sprintf("client match ambiguous: %d of these %d executing watch requests are %s; the trace cannot tie a goroutine to a request", min(left[v], len(pool)), len(pool), verdictName(v)))
			}
			out = append(out, f)
		}
	}
	return out
}
