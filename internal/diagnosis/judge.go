package diagnosis

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/watches"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// StallBound is how long a watch may be initializing before the cheap
// look (APF dump_requests, a debug=1 or protobuf profile) counts it as a
// suspect: the no-progress bound of the proposed stall timeout
// (kubernetes PR 141899, 30 s). A watch initializing for less cannot be
// stuck past it, and StuckInitialEvents needs a wait of a minute.
const StallBound = 30 * time.Second

// partialRatio: a debug=2 dump holding fewer goroutines than this share
// of go_goroutines is partial. /metrics and the dump are read moments
// apart, so the counts differ a little in a whole dump.
const partialRatio = 0.9

// Options tune the diagnosis.
type Options struct {
	// CaptureSlack is how far the capture time may precede the dump: ages
	// computed from it may be short by that much. Bundles record the time
	// just before their first fetch, so the default is generous.
	CaptureSlack time.Duration
	// Words point the user, in the caller's terms, at how to change what
	// the warnings and advice question.
	Words Words
}

// DefaultCaptureSlack is the default Options.CaptureSlack.
const DefaultCaptureSlack = 30 * time.Second

// Diagnose turns the samples of each API server into an api.Report.
func Diagnose(servers []watches.Server, opts Options) *api.Report {
	if opts.CaptureSlack <= 0 {
		opts.CaptureSlack = DefaultCaptureSlack
	}
	r := &api.Report{APIVersion: api.GroupVersion, Kind: api.KindReport, Findings: []api.Finding{}}
	for _, s := range servers {
		diagnoseServer(r, s, opts)
	}
	sortFindings(r.Findings)
	for _, f := range r.Findings {
		switch f.Type {
		case api.StuckInitialEvents:
			r.Summary.StuckWatches++
			r.Summary.StuckGoroutines += len(f.GoroutineIDs)
			if f.SeatsKnown() {
				r.Summary.StuckSeats += f.Client.Seats
			} else {
				r.Summary.StuckUnattributed++
			}
		case api.SlowInitialEvents:
			r.Summary.SlowWatches++
		case api.BlockedStreaming:
			r.Summary.BlockedStreaming++
		case api.UndecidedInitialEvents:
			r.Summary.UndecidedWatches++
		case api.HeldAfterWatcherClosed:
			r.Summary.HeldAfterWatcherClosed++
		}
	}
	for _, a := range r.APIServers {
		r.Summary.Goroutines += a.Goroutines
	}
	r.Advice = advice(r, opts.Words)
	return r
}

func diagnoseServer(r *api.Report, s watches.Server, opts Options) {
	info := api.APIServer{Name: s.Name, Version: s.Version, Samples: len(s.Samples), Notes: append([]string(nil), s.Notes...)}
	last, prev := -1, -1
	for i := len(s.Samples) - 1; i >= 0; i-- {
		d := s.Samples[i].Dump
		if d == nil {
			continue
		}
		if last < 0 {
			last = i
		} else if prev < 0 && !d.Aggregated() && !s.Samples[last].Dump.Aggregated() {
			prev = i
		}
	}
	if useTrace, note := traceChoice(s, last); useTrace {
		diagnoseTrace(r, info, s, note)
		return
	} else if note != "" {
		info.Notes = append(info.Notes, note)
	}
	if last < 0 {
		info.Notes = append(info.Notes, "no goroutine dump: watchers cannot be examined")
		if len(s.Samples) > 0 {
			addMetricsInfo(&info, s.Samples[len(s.Samples)-1].Metrics)
		}
		r.APIServers = append(r.APIServers, info)
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s: no goroutine dump given: nothing to diagnose", s.Name))
		return
	}
	cur := s.Samples[last]
	d := cur.Dump
	if !cur.CapturedAt.IsZero() {
		t := cur.CapturedAt.UTC()
		info.CapturedAt = &t
	}
	info.DumpFormat = d.Format
	info.Goroutines = d.Goroutines
	info.Notes = append(info.Notes, d.Notes...)
	for _, w := range d.Warnings {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s: %s", s.Name, w))
	}
	info.Coverage = coverage(d, cur.Metrics)
	if c := info.Coverage; c != nil {
		r.Incomplete = append(r.Incomplete, fmt.Sprintf("%s: partial goroutine dump, covering %s: %s; watches in the missing goroutines are not decided", s.Name, c.Text(), c.Reason))
	}
	addMetricsInfo(&info, cur.Metrics)
	for _, w := range d.Watchers {
		info.Watchers++
		if w.Phase == api.PhaseInitial {
			info.InitialPhase++
		}
	}
	if d.Aggregated() {
		info.PhaseCounts = d.PhaseCounts
		for _, pc := range d.PhaseCounts {
			info.Watchers += pc.Count
			if pc.Phase == api.PhaseInitial {
				info.InitialPhase += pc.Count
			}
		}
		decideAggregated(r, &info, s.Name, cur)
		r.APIServers = append(r.APIServers, info)
		return
	}
	var prevSample *watches.Sample
	if prev >= 0 {
		prevSample = &s.Samples[prev]
	}
	findings, watchersToMatch := judge(s.Name, cur, prevSample, opts.CaptureSlack)
	findings, watchersToMatch = judgeHeld(s.Name, d, findings, watchersToMatch)
	findings, watchersToMatch = judgeCacheWaits(s.Name, d, findings, watchersToMatch)
	if s.Trace != nil {
		info.Notes = append(info.Notes, refineWithTrace(findings, s.Trace)...)
	}
	// Attribute clients.
	reqs := executingWatches(cur.Requests)
	switch {
	case cur.Requests == nil:
		if len(findings) > 0 {
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s: no APF dump_requests given: findings name no client (capture /debug/api_priority_and_fairness/dump_requests?includeRequestDetails=1)", s.Name))
		}
	case !cur.Requests.HasDetails:
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s: the APF dump was taken without includeRequestDetails=1: it names no verbs or paths, so every executing request outside the exempt level is a candidate and clients can only be ambiguous", s.Name))
	}
	if cur.Requests != nil && cur.CapturedAt.IsZero() {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s: no capture time (%s): ages from APF are unavailable, clients are matched by count and order only", s.Name, opts.Words.captureTime()))
	}
	incomplete := ""
	if cur.Requests != nil && len(cur.Requests.Skipped) > 0 {
		sk := cur.Requests.Skipped
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s: %d APF rows skipped (first at line %d: %s)", s.Name, len(sk), sk[0].Line, sk[0].Reason))
		incomplete = fmt.Sprintf("%d APF rows were skipped", len(sk))
	}
	if cur.Requests != nil && len(reqs) < len(watchersToMatch) {
		incomplete = fmt.Sprintf("the APF dump lists %d executing watch requests for %d initial-phase watchers (it was taken after the goroutine dump)", len(reqs), len(watchersToMatch))
	}
	if info.Coverage != nil && incomplete == "" {
		// The owner of a request may be a watcher after the cut.
		incomplete = "the goroutine dump is partial"
	}
	if cur.Requests != nil {
		in := matchInput{watchers: watchersToMatch, reqs: reqs, at: cur.CapturedAt, slack: opts.CaptureSlack, details: cur.Requests.HasDetails, incomplete: incomplete, mixed: cur.Mixed, seenAt: seenAt(cur, prevSample)}
		if cur.Metrics != nil {
			in.watchRequests = cur.Metrics.WatchRequests
			in.metricsAt = cur.MetricsAt
		}
		if cur.Mixed != "" {
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s: %s; clients are matched as ambiguous at best", s.Name, cur.Mixed))
		}
		res := matchClients(in)
		if res.typesDropped != "" {
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s: the handlers' object types do not agree with /metrics (%s): clients are matched without them", s.Name, res.typesDropped))
		}
		applyMatches(findings, in, res)
		for _, f := range findings {
			f.Evidence = append(f.Evidence, metricsEvidence(f, cur.Metrics)...)
		}
		for i, rq := range reqs {
			if !res.used[i] {
				r.UnmatchedRequests = append(r.UnmatchedRequests, toRequest(s.Name, rq, cur.CapturedAt))
			}
		}
		if info.Coverage != nil {
			// Initializing requests that are neither attributed to a
			// watcher of the covered part nor a candidate of one: their
			// watcher may be after the cut. Suspects, never healthy.
			var open []apf.Request
			used := 0
			for i, rq := range reqs {
				if res.used[i] {
					used++
				} else {
					open = append(open, rq)
				}
			}
			// Candidates beyond the watchers that share them may belong
			// to watchers after the cut too; which ones is not known.
			claiming := 0
			for _, pr := range res.pairs {
				if pr.req >= 0 || pr.nCand > 0 {
					claiming++
				}
			}
			if extra := used - claiming; extra > 0 {
				findings = append(findings, sharedSuspects(s.Name, reqs, res, extra, cur.CapturedAt)...)
			}
			for _, rq := range initializingLonger(open, cur.CapturedAt) {
				findings = append(findings, undecidedFinding(s.Name, rq, cur.CapturedAt, "no watcher of the covered part of the partial goroutine dump is attributed to it: stuck or slow: not decided"))
			}
		}
		for i, w := range watchersToMatch {
			if res.pairs[i].req < 0 && res.pairs[i].nCand == 0 {
				r.UnmatchedWatchers = append(r.UnmatchedWatchers, api.UnmatchedWatcher{APIServer: s.Name, GoroutineID: w.GoroutineID, State: w.State, WaitMinutes: w.WaitMinutes})
			}
		}
	}
	connectionEvidence(findings)
	r.PriorityLevels = append(r.PriorityLevels, priorityLevels(s.Name, findings, cur)...)
	r.Findings = slices.Grow(r.Findings, len(findings))
	for i, f := range findings {
		if f.Client == nil && cur.Requests != nil {
			f.Evidence = append(f.Evidence, "no executing watch request in the APF dump fits this watcher: its request may have ended after the goroutine dump, or be served by another API server")
		}
		r.Findings = append(r.Findings, *f)
		findings[i] = nil // one copy of each finding alive at a time
	}
	for _, w := range watchersToMatch {
		if w.Handler == nil && d.HasParentIDs {
			info.Notes = append(info.Notes, fmt.Sprintf("watcher goroutine %d: its handler goroutine is not in the dump", w.GoroutineID))
		}
	}
	r.APIServers = append(r.APIServers, info)
}

// coverage says how much of the server's goroutines d holds when it is
// partial: cut (see stacks.Stats.Partial), or holding clearly fewer
// goroutines than go_goroutines. nil when it looks whole.
func coverage(d *watches.Dump, m *watches.MetricsContext) *api.Coverage {
	if d.Aggregated() {
		return nil
	}
	c := &api.Coverage{Goroutines: d.Goroutines, Reason: d.Partial}
	if m != nil && m.Goroutines != nil && *m.Goroutines >= 1 {
		c.Of = int(*m.Goroutines)
	}
	if c.Reason == "" {
		if c.Of == 0 || float64(d.Goroutines) >= partialRatio*float64(c.Of) {
			return nil
		}
		c.Reason = fmt.Sprintf("it holds %d goroutines but go_goroutines said %d: it was cut, or comes from another process", d.Goroutines, c.Of)
	}
	if c.Of < c.Goroutines {
		// Counted at another moment: the total is not known.
		c.Of = 0
	}
	return c
}

// decideAggregated decides what can be decided from a debug=1 or protobuf
// profile and the APF dump alone (the cheap look): no watcher blocked
// sending, or none initializing for longer than StallBound, means none is
// stuck. Otherwise the watches initializing longer are listed as
// UndecidedInitialEvents and the report is incomplete.
func decideAggregated(r *api.Report, info *api.APIServer, server string, cur watches.Sample) {
	d := cur.Dump
	initialSending, streamingSending := 0, 0
	for _, pc := range d.PhaseCounts {
		switch {
		case !pc.InSend:
		case pc.Phase == api.PhaseInitial:
			initialSending += pc.Count
		default:
			streamingSending += pc.Count
		}
	}
	withheld := ""
	if cur.Withheld != "" {
		withheld = "; " + cur.Withheld
	}
	aged := cur.Requests != nil && cur.Requests.HasDetails && !cur.CapturedAt.IsZero()
	switch {
	case initialSending == 0 && streamingSending == 0:
		info.Notes = append(info.Notes, fmt.Sprintf("decided without a debug=2 dump: the %s profile shows no watcher blocked sending an event, so none is stuck", d.Format))
		return
	case streamingSending > 0:
		r.Incomplete = append(r.Incomplete, fmt.Sprintf("%s: %d streaming watchers are sending events in the %s profile: blocked or not is not decided without a goroutine dump%s", server, streamingSending, d.Format, withheld))
		if initialSending == 0 || !aged {
			break
		}
		fallthrough
	case aged:
		init := executingWatches(cur.Requests)
		suspects := initializingLonger(init, cur.CapturedAt)
		if len(suspects) == 0 {
			info.Notes = append(info.Notes, fmt.Sprintf("decided without a debug=2 dump: %d watch requests are initializing (APF dump_requests), none for longer than %s, so none is stuck past that bound", len(init), StallBound))
			return
		}
		for _, rq := range suspects {
			f := undecidedFinding(server, rq, cur.CapturedAt, "stuck or slow: not decided without a goroutine dump"+withheld)
			r.Findings = append(r.Findings, *f)
		}
		r.Incomplete = append(r.Incomplete, fmt.Sprintf("%s: %d watch requests initializing for longer than %s: stuck or slow: not decided without a goroutine dump%s", server, len(suspects), StallBound, withheld))
		return
	default:
		r.Incomplete = append(r.Incomplete, fmt.Sprintf("%s: %d watchers are replaying initial events in the %s profile: stuck or slow: not decided without a goroutine dump (or APF dump_requests with a capture time)%s", server, initialSending, d.Format, withheld))
	}
}

// initializingLonger are the requests of rs executing for longer than
// StallBound at at.
func initializingLonger(rs []apf.Request, at time.Time) []apf.Request {
	var out []apf.Request
	for _, rq := range rs {
		if !at.IsZero() && at.Sub(rq.StartTime) > StallBound {
			out = append(out, rq)
		}
	}
	return out
}

// undecidedFinding is an UndecidedInitialEvents finding for a watch
// request seen initializing in the APF dump.
func undecidedFinding(server string, rq apf.Request, at time.Time, why string) *api.Finding {
	req := toRequest(server, rq, at)
	start := req.StartTime
	age := at.Sub(rq.StartTime)
	return &api.Finding{
		Type: api.UndecidedInitialEvents, Severity: api.SeverityWarning, APIServer: server, Phase: api.PhaseInitial,
		GoroutineIDs: []int64{},
		Client: &api.Client{
			User: req.User, Verb: req.Verb, Path: req.Path, Namespace: req.Namespace, Resource: req.Resource,
			PriorityLevel: req.PriorityLevel, FlowSchema: req.FlowSchema, Seats: req.Seats, StartTime: &start,
		},
		Message:  fmt.Sprintf("initializing for %s, holding %d APF seat(s): %s", roundDuration(age), req.Seats, why),
		Evidence: []string{fmt.Sprintf("APF dump_requests: executing watch of %s started %s, %s before the capture", req.User, start.Format(time.RFC3339), roundDuration(age))},
	}
}

// sharedSuspects are the UndecidedInitialEvents findings of a partial
// dump for the extra watchers whose requests are among the candidates of
// covered ambiguous watchers: extra of those requests belong to watchers
// after the cut, which ones is not known, so each finding lists the
// candidates initializing longer than StallBound.
func sharedSuspects(server string, reqs []apf.Request, res matchResult, extra int, at time.Time) []*api.Finding {
	attributed := make([]bool, len(reqs))
	for _, pr := range res.pairs {
		if pr.req >= 0 && pr.conf != api.MatchAmbiguous {
			attributed[pr.req] = true
		}
	}
	var pool []apf.Request
	for i, rq := range reqs {
		if res.used[i] && !attributed[i] {
			pool = append(pool, rq)
		}
	}
	pool = initializingLonger(pool, at)
	if len(pool) == 0 {
		return nil
	}
	// Oldest first, as the matcher lists candidates.
	sort.SliceStable(pool, func(a, b int) bool { return pool[a].StartTime.Before(pool[b].StartTime) })
	var out []*api.Finding
	for n := 0; n < extra && n < len(pool); n++ {
		f := undecidedFinding(server, pool[0], at, fmt.Sprintf("%d of these %d requests, candidates of watchers in the covered part, belong to watchers in the missing part of the partial goroutine dump: stuck or slow: not decided", extra, len(pool)))
		f.Client = commonClient(pool)
		f.Evidence = f.Evidence[:0]
		for _, rq := range pool {
			c := toRequest(server, rq, at)
			f.Candidates = append(f.Candidates, c)
			f.Evidence = append(f.Evidence, fmt.Sprintf("APF dump_requests: executing watch of %s started %s, %s before the capture", c.User, c.StartTime.Format(time.RFC3339), roundDuration(at.Sub(rq.StartTime))))
		}
		out = append(out, f)
	}
	return out
}

func addMetricsInfo(info *api.APIServer, m *watches.MetricsContext) {
	if m == nil {
		return
	}
	if m.ResidentMemoryBytes != nil {
		info.ResidentMemoryBytes = *m.ResidentMemoryBytes
	}
	info.WatchersByResource = m.WatchersByResource
}

// judge applies the rules of the finding types to the watchers of cur,
// using prev (an earlier debug=2 sample of the same process) to tell a
// watcher that made progress from one that did not. It returns the
// findings and the initial-phase watchers, which all hold an executing
// APF request and so take part in client matching.
func judge(server string, cur watches.Sample, prev *watches.Sample, slack time.Duration) ([]*api.Finding, []api.Watcher) {
	var before map[int64]api.Watcher
	var interval time.Duration
	if prev != nil {
		before = make(map[int64]api.Watcher, len(prev.Dump.Watchers))
		for _, w := range prev.Dump.Watchers {
			before[w.GoroutineID] = w
		}
		if !cur.CapturedAt.IsZero() && !prev.CapturedAt.IsZero() {
			interval = cur.CapturedAt.Sub(prev.CapturedAt)
		}
	}
	var findings []*api.Finding
	var initial []api.Watcher
	msgs := interner{}
	for _, w := range cur.Dump.Watchers {
		if w.Phase == api.PhaseInitial {
			initial = append(initial, w)
		}
		if !w.Blocked {
			continue
		}
		f := &api.Finding{
			APIServer:    server,
			Phase:        w.Phase,
			GoroutineIDs: w.GoroutineIDs(),
			Watcher:      w,
		}
		if w.Handler != nil {
			f.Connection = w.Handler.ConnGoroutineID
		}
		minutes := w.WaitMinutes
		f.BlockedMinutes = &minutes
		f.Evidence = append(f.Evidence, watcherEvidence(w)...)
		switch w.Phase {
		case api.PhaseStreaming:
			if w.WaitMinutes < 1 {
				continue
			}
			f.Type, f.Severity = api.BlockedStreaming, api.SeverityWarning
			f.Message = fmt.Sprintf("streaming watcher blocked sending for %s; upstream closes it only when a new event for it cannot be queued (cache_watcher.go add)", minutesText(w.WaitMinutes))
		case api.PhaseInitial:
			judgeInitial(f, w, before, prev != nil, interval, slack)
		}
		f.Message = msgs.intern(f.Message)
		findings = append(findings, f)
	}
	return findings, initial
}

// judgeInitial decides stuck versus slow for a blocked initial-phase
// watcher.
//
// The wait the runtime prints is approximate, and a fresh block can print
// "1 minutes" (stacks.Goroutine.WaitMinutes says why), so a single sample
// cannot be sure.
//
// Two samples decide by the event: sendWatchCacheEvent's arguments are
// the watcher and the *watchCacheEvent being sent. Blocked on the same
// event in both samples, the watcher sent nothing in between (the event
// stays referenced while it waits, so its address cannot be reused); on
// another event, it made progress. Without the arguments (a dump read
// without them), a wait that went down, or grew less than the interval's
// whole minutes, proves progress.
func judgeInitial(f *api.Finding, w api.Watcher, before map[int64]api.Watcher, twoSamples bool, interval, slack time.Duration) {
	p, seen := before[w.GoroutineID]
	seenBlocked := seen && p.Phase == api.PhaseInitial && p.Blocked
	pointers := seenBlocked && p.Event != "" && w.Event != ""
	sameEvent := pointers && p.Event == w.Event && p.CacheWatcher == w.CacheWatcher
	minutes := -1 // whole minutes surely between the samples; -1 unknown
	if interval > 0 {
		minutes = max(int((interval-2*slack)/time.Minute), 0)
	}
	waitFell := seenBlocked && w.WaitMinutes < p.WaitMinutes
	notContinuous := seenBlocked && minutes > 0 && p.WaitMinutes >= 1 && w.WaitMinutes < p.WaitMinutes+minutes
	progressed := (pointers && !sameEvent) || (!pointers && (waitFell || notContinuous))
	between := "between the samples"
	if interval > 0 {
		between = fmt.Sprintf("over %s", roundDuration(interval))
	}
	proven := interval > 0 && interval-2*slack >= time.Minute
	switch {
	case progressed && pointers:
		f.Type, f.Severity = api.SlowInitialEvents, api.SeverityInfo
		f.Message = fmt.Sprintf("replaying initial events and progressing: it sent events %s (it now waits on another event)", between)
		f.Evidence = append(f.Evidence, fmt.Sprintf("same goroutine %d blocked in both samples on different events (%s, then %s)", w.GoroutineID, p.Event, w.Event))
	case progressed && w.WaitMinutes >= 1:
		f.Type, f.Severity = api.SlowInitialEvents, api.SeverityWarning
		f.Message = fmt.Sprintf("replaying initial events and progressing, maybe with long stalls: the runtime reported it blocked %s in the first sample and %s in the second, so it sent events %s", minutesText(p.WaitMinutes), minutesText(w.WaitMinutes), between)
		f.Evidence = append(f.Evidence, fmt.Sprintf("same goroutine %d blocked in both samples, wait %d -> %d minutes %s: not continuous", w.GoroutineID, p.WaitMinutes, w.WaitMinutes, between))
	case progressed:
		f.Type, f.Severity = api.SlowInitialEvents, api.SeverityInfo
		f.Message = fmt.Sprintf("replaying initial events and progressing: the runtime reported it blocked %s in the first sample, under a minute now", minutesText(p.WaitMinutes))
	case sameEvent && (w.WaitMinutes >= 1 || proven):
		f.Type, f.Severity = api.StuckInitialEvents, api.SeverityCritical
		f.Message = fmt.Sprintf("stuck replaying initial events: blocked on the same event in both samples, %s apart, so it sent nothing in between (the runtime reports a wait of %s); past the 30 s no-progress bound of the proposed fix (kubernetes PR 141899), and nothing frees it before the request ends", strings.TrimPrefix(between, "over "), minutesText(w.WaitMinutes))
		f.Evidence = append(f.Evidence, fmt.Sprintf("same goroutine %d blocked on the same event %s in both samples %s", w.GoroutineID, w.Event, between))
	case sameEvent:
		f.Type, f.Severity = api.SlowInitialEvents, api.SeverityWarning
		f.Message = fmt.Sprintf("replaying initial events: blocked on the same event in both samples only %s apart, and the runtime reports under a minute: no progress between them, but take samples more than a minute apart to decide", strings.TrimPrefix(between, "over "))
		f.Evidence = append(f.Evidence, fmt.Sprintf("same goroutine %d blocked on the same event %s in both samples %s", w.GoroutineID, w.Event, between))
	case w.WaitMinutes >= 1:
		f.Type, f.Severity = api.StuckInitialEvents, api.SeverityCritical
		f.Message = fmt.Sprintf("stuck replaying initial events: the runtime reports it blocked sending for %s, past the 30 s no-progress bound of the proposed fix (kubernetes PR 141899); nothing frees it before the request ends. The runtime counts a wait from the garbage collection before the one that saw it blocked, so a fresh block can read a minute long: a second sample confirms", minutesText(w.WaitMinutes))
		if seenBlocked {
			f.Evidence = append(f.Evidence, fmt.Sprintf("same goroutine %d blocked in the initial phase in both samples, wait %d -> %d minutes %s", w.GoroutineID, p.WaitMinutes, w.WaitMinutes, between))
		}
	default:
		f.Type, f.Severity = api.SlowInitialEvents, api.SeverityWarning
		switch {
		case !twoSamples:
			f.Message = "replaying initial events, blocked sending for under a minute: may be a slow client still progressing; a second sample decides (diagnose samples twice; or analyze two captures of the same server)"
		case seen && !seenBlocked:
			f.Message = "replaying initial events and progressing: it was not blocked in the first sample; blocked under a minute now"
			f.Severity = api.SeverityInfo
		case seenBlocked && minutes >= 3:
			f.Message = fmt.Sprintf("replaying initial events and progressing: blocked in both samples %s apart yet never for a full minute", roundDuration(interval))
			f.Severity = api.SeverityInfo
		case seenBlocked:
			f.Message = fmt.Sprintf("replaying initial events, blocked under a minute in both samples (%s): not proven stuck; samples more than a minute apart decide", strings.TrimPrefix(between, "over "))
		default:
			f.Message = "replaying initial events, blocked sending for under a minute; it started after the first sample"
		}
	}
}

func watcherEvidence(w api.Watcher) []string {
	ev := []string{fmt.Sprintf("goroutine %d [%s%s] in sendWatchCacheEvent from %s", w.GoroutineID, w.State, waitSuffix(w.WaitMinutes), phaseFunc(w.Phase))}
	if h := w.Handler; h != nil {
		switch h.Block {
		case api.HandlerClientNotReading:
			ev = append(ev, fmt.Sprintf("handler goroutine %d [%s%s] blocked in http2 writeDataFromHandler: the client stopped reading", h.GoroutineID, h.State, waitSuffix(h.WaitMinutes)))
		case api.HandlerWaitingForEvents:
			ev = append(ev, fmt.Sprintf("handler goroutine %d waits for events in HandleHTTP", h.GoroutineID))
		default:
			ev = append(ev, fmt.Sprintf("handler goroutine %d [%s]", h.GoroutineID, h.State))
		}
	}
	if w.APFGoroutineID != 0 {
		ev = append(ev, fmt.Sprintf("APF goroutine %d in initializationSignal.Wait: seats held until WatchInitialized", w.APFGoroutineID))
	}
	return ev
}

func phaseFunc(p api.Phase) string {
	if p == api.PhaseStreaming {
		return "process"
	}
	return "processInterval"
}

func waitSuffix(m int) string {
	if m < 1 {
		return ""
	}
	return fmt.Sprintf(", %d minutes", m)
}

func minutesText(m int) string {
	switch {
	case m < 1:
		return "under a minute"
	case m == 1:
		return "at least 1 minute"
	}
	return fmt.Sprintf("at least %d minutes", m)
}

func roundDuration(d time.Duration) string { return d.Round(time.Second).String() }

// executingWatches are the requests that can hold a watcher's seats: the
// executing watches, or, when the dump names no verbs (no
// includeRequestDetails), every executing request outside the exempt
// level (exempt requests hold no seats).
func executingWatches(rs *apf.Requests) []apf.Request {
	if rs == nil {
		return nil
	}
	out := make([]apf.Request, 0, len(rs.Requests))
	for _, r := range rs.Requests {
		switch {
		case !r.Executing():
		case rs.HasDetails && strings.EqualFold(r.Verb, "watch"):
			out = append(out, r)
		case !rs.HasDetails && r.PriorityLevel != "exempt":
			out = append(out, r)
		}
	}
	return out
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

func sortFindings(fs []api.Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if ra, rb := a.Severity.Rank(), b.Severity.Rank(); ra != rb {
			return ra > rb
		}
		if a.APIServer != b.APIServer {
			return a.APIServer < b.APIServer
		}
		if a.Connection != b.Connection {
			return a.Connection < b.Connection
		}
		return a.Watcher.GoroutineID < b.Watcher.GoroutineID
	})
}
