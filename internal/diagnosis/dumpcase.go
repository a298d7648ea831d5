package diagnosis

import (
	"context"
	"fmt"

	"github.com/watch-doctor/watch-doctor/internal/watches"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// dumpCase is the diagnosis of one server from its last debug=2 sample
// (cur) and an earlier one of the same process (prev, nil for none), in
// steps: judge the watchers (judgeAll), refine the verdicts with the
// execution trace (refineWithTrace), say what the APF dump lacks
// (apfWarnings), attribute clients (attribute, partialSuspects), and
// annotate what was found (annotate).
type dumpCase struct {
	// ctx stops the steps early (halt.go); nil never does.
	ctx     context.Context
	server  string
	version string
	cur     watches.Sample
	prev    *watches.Sample
	opts    Options
	// partial: the dump is partial (api.APIServer.Coverage), so watchers
	// after the cut may own requests of the APF dump.
	partial bool
	// trace is the server's execution trace, nil for none.
	trace *watches.Trace
}

// diagnose runs the steps in order and returns what they add.
func (c dumpCase) diagnose() added {
	findings, toMatch := c.judgeAll()
	var out added
	if c.trace != nil {
		out.notes = append(out.notes, refineWithTrace(findings, c.trace)...)
	}
	reqs := executingWatches(c.cur.Requests)
	out.warnings = append(out.warnings, c.apfWarnings(len(findings))...)
	if c.cur.Requests != nil {
		matched, suspects := c.attribute(findings, toMatch, reqs)
		out.add(matched)
		findings = append(findings, suspects...)
	}
	out.add(c.annotate(findings, toMatch))
	return out
}

// judgeAll are the findings of the dump's watchers, held handlers and
// cache waits, and the watchers that hold an executing APF request (to
// match with one).
func (c dumpCase) judgeAll() ([]*api.Finding, []api.Watcher) {
	findings, toMatch := judge(c.ctx, c.server, c.cur, c.prev, c.opts.CaptureSlack)
	findings, toMatch = judgeHeld(c.server, c.cur.Dump, findings, toMatch)
	return judgeCacheWaits(c.server, c.cur.Dump, findings, toMatch)
}

// apfWarnings say what the sample's APF dump cannot tell: no dump at all
// (when there are findings to name clients for), no request details, no
// capture time to age requests by, skipped rows.
func (c dumpCase) apfWarnings(findings int) []string {
	var out []string
	rs := c.cur.Requests
	switch {
	case rs == nil:
		if findings > 0 {
			out = append(out, fmt.Sprintf("%s: no APF dump_requests given: findings name no client (capture /debug/api_priority_and_fairness/dump_requests?includeRequestDetails=1)", c.server))
		}
	case !rs.HasDetails:
		out = append(out, fmt.Sprintf("%s: the APF dump was taken without includeRequestDetails=1: it names no verbs or paths, so every executing request outside the exempt level is a candidate and clients can only be ambiguous", c.server))
	}
	if rs != nil && c.cur.CapturedAt.IsZero() {
		out = append(out, fmt.Sprintf("%s: no capture time (%s): ages from APF are unavailable, clients are matched by count and order only", c.server, captureTime(c.opts.Words)))
	}
	if rs != nil && len(rs.Skipped) > 0 {
		sk := rs.Skipped
		out = append(out, fmt.Sprintf("%s: %d APF rows skipped (first at line %d: %s)", c.server, rs.SkippedCount(), sk[0].Line, sk[0].Reason))
	}
	return out
}

// matchGaps says why the APF dump may lack some watchers' requests
// (matchInput.incomplete), "" when nothing says so.
func (c dumpCase) matchGaps(reqs []apf.Request, toMatch []api.Watcher) string {
	incomplete := ""
	if rs := c.cur.Requests; rs != nil && rs.SkippedCount() > 0 {
		incomplete = fmt.Sprintf("%d APF rows were skipped", rs.SkippedCount())
	}
	if c.cur.Requests != nil && len(reqs) < len(toMatch) {
		incomplete = fmt.Sprintf("the APF dump lists %d executing watch requests for %d initial-phase watchers (it was taken after the goroutine dump)", len(reqs), len(toMatch))
	}
	if c.partial && incomplete == "" {
		// The owner of a request may be a watcher after the cut.
		incomplete = "the goroutine dump is partial"
	}
	return incomplete
}

// attribute matches the watchers of toMatch with the executing watch
// requests reqs, writes the clients and the /metrics evidence into
// findings, and returns the warnings, the requests and watchers left
// unmatched, and the undecided findings a partial dump leaves
// (partialSuspects).
func (c dumpCase) attribute(findings []*api.Finding, toMatch []api.Watcher, reqs []apf.Request) (added, []*api.Finding) {
	cur := c.cur
	in := matchInput{ctx: c.ctx, watchers: toMatch, reqs: reqs, at: cur.CapturedAt, slack: c.opts.CaptureSlack, details: cur.Requests.HasDetails, incomplete: c.matchGaps(reqs, toMatch), mixed: cur.Mixed, seenAt: seenAt(cur, c.prev)}
	if cur.Metrics != nil {
		in.watchRequests = cur.Metrics.WatchRequests
		in.metricsAt = cur.MetricsAt
	}
	var out added
	if cur.Mixed != "" {
		out.warnings = append(out.warnings, fmt.Sprintf("%s: %s; clients are matched as ambiguous at best", c.server, cur.Mixed))
	}
	res := matchClients(in)
	if res.typesDropped != "" {
		out.warnings = append(out.warnings, fmt.Sprintf("%s: the handlers' object types do not agree with /metrics (%s): clients are matched without them", c.server, res.typesDropped))
	}
	applyMatches(findings, in, res)
	for _, f := range findings {
		f.Evidence = append(f.Evidence, metricsEvidence(f, cur.Metrics)...)
	}
	var suspects []*api.Finding
	for i, rq := range reqs {
		switch {
		case res.used[i]:
		case !c.partial && len(initializingLonger([]apf.Request{rq}, cur.CapturedAt)) == 1:
			// Fail closed: APF holds it past the bound and no watcher
			// of the whole dump explains it.
			f := undecidedFinding(c.server, rq, cur.CapturedAt, "stuck or slow: not decided: no initial-phase watcher of the goroutine dump explains it: "+unrecognised(c.version))
			f.UndecidedReason = api.UndecidedNoRecognisedWatcher
			suspects = append(suspects, f)
		default:
			out.unmatchedRequests = append(out.unmatchedRequests, toRequest(c.server, rq, cur.CapturedAt))
		}
	}
	if n := len(suspects); n > 0 {
		out.incomplete = append(out.incomplete, fmt.Sprintf("%s: %d watch requests initializing for longer than %s have no initial-phase watcher in the goroutine dump: %s", c.server, n, StallBound, unrecognised(c.version)))
	}
	if c.partial {
		suspects = c.partialSuspects(reqs, res)
	}
	for i, w := range toMatch {
		if res.pairs[i].req < 0 && res.pairs[i].nCand == 0 {
			out.unmatchedWatchers = append(out.unmatchedWatchers, api.UnmatchedWatcher{APIServer: c.server, GoroutineID: w.GoroutineID, State: w.State, WaitMinutes: w.WaitMinutes})
		}
	}
	return out, suspects
}

// partialSuspects are the UndecidedInitialEvents findings of a partial
// dump: initializing requests that are neither attributed to a watcher
// of the covered part nor a candidate of one (their watcher may be after
// the cut: suspects, never healthy), and the candidates beyond the
// watchers that share them (sharedSuspects).
func (c dumpCase) partialSuspects(reqs []apf.Request, res matchResult) []*api.Finding {
	at := c.cur.CapturedAt
	var open []apf.Request
	used := 0
	for i, rq := range reqs {
		if res.used[i] {
			used++
		} else {
			open = append(open, rq)
		}
	}
	claiming := 0
	for _, pr := range res.pairs {
		if pr.req >= 0 || pr.nCand > 0 {
			claiming++
		}
	}
	var out []*api.Finding
	if extra := used - claiming; extra > 0 {
		out = append(out, sharedSuspects(c.server, reqs, res, extra, at)...)
	}
	for _, rq := range initializingLonger(open, at) {
		f := undecidedFinding(c.server, rq, at, "no watcher of the covered part of the partial goroutine dump is attributed to it: stuck or slow: not decided")
		f.UndecidedReason = api.UndecidedPartialDump
		out = append(out, f)
	}
	return out
}

// annotate adds the connection evidence and, to a finding no request
// fits, why; and returns the findings with the seats they hold per
// priority level and a note per watcher whose handler is not in the
// dump.
func (c dumpCase) annotate(findings []*api.Finding, toMatch []api.Watcher) added {
	connectionEvidence(findings)
	out := added{findings: findings, levels: priorityLevels(c.server, findings, c.cur)}
	for _, f := range findings {
		if f.Client == nil && c.cur.Requests != nil {
			f.Evidence = append(f.Evidence, "no executing watch request in the APF dump fits this watcher: its request may have ended after the goroutine dump, or be served by another API server")
		}
	}
	for _, w := range toMatch {
		if w.Handler == nil && c.cur.Dump.HasParentIDs {
			out.notes = append(out.notes, fmt.Sprintf("watcher goroutine %d: its handler goroutine is not in the dump", w.GoroutineID))
		}
	}
	return out
}
