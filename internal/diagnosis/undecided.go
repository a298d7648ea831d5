package diagnosis

import (
	"fmt"
	"sort"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/watches"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// decideAggregated decides what can be decided from a debug=1 or protobuf
// profile and the APF dump alone (the cheap look): no watcher blocked
// sending, or none initializing for longer than StallBound, means none is
// stuck. Otherwise the watches initializing longer are listed as
// UndecidedInitialEvents and the report is incomplete. It returns the
// notes, findings and incompleteness it adds.
func decideAggregated(server, version string, cur watches.Sample) added {
	d := cur.Dump
	var out added
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
	if aged {
		if f := unexplainedByProfile(server, cur, version); f.findings != nil {
			return f
		}
	}
	switch {
	case initialSending == 0 && streamingSending == 0:
		out.notes = append(out.notes, fmt.Sprintf("decided without a debug=2 dump: the %s profile shows no watcher blocked sending an event, so none is stuck", d.Format))
		return out
	case streamingSending > 0:
		out.incomplete = append(out.incomplete, fmt.Sprintf("%s: %d streaming watchers are sending events in the %s profile: blocked or not is not decided without a goroutine dump%s", server, streamingSending, d.Format, withheld))
		if initialSending == 0 || !aged {
			break
		}
		fallthrough
	case aged:
		init := executingWatches(cur.Requests)
		suspects := initializingLonger(init, cur.CapturedAt)
		if len(suspects) == 0 {
			out.notes = append(out.notes, fmt.Sprintf("decided without a debug=2 dump: %d watch requests are initializing (APF dump_requests), none for longer than %s, so none is stuck past that bound", len(init), StallBound))
			return out
		}
		for _, rq := range suspects {
			f := undecidedFinding(server, rq, cur.CapturedAt, "stuck or slow: not decided without a goroutine dump"+withheld)
			f.UndecidedReason = api.UndecidedAggregatedProfile
			out.findings = append(out.findings, f)
		}
		out.incomplete = append(out.incomplete, fmt.Sprintf("%s: %d watch requests initializing for longer than %s: stuck or slow: not decided without a goroutine dump%s", server, len(suspects), StallBound, withheld))
		return out
	default:
		out.incomplete = append(out.incomplete, fmt.Sprintf("%s: %d watchers are replaying initial events in the %s profile: stuck or slow: not decided without a goroutine dump (or APF dump_requests with a capture time)%s", server, initialSending, d.Format, withheld))
	}
	return out
}

// unexplainedByProfile fails closed on an aggregated profile: when more
// watch requests are initializing past StallBound than the profile has
// initial-phase watchers (sending or not), the profile cannot explain
// them (a watcher loop of a shape this build does not recognise, or a
// profile of another process), so each is UndecidedInitialEvents,
// whatever the profile shows sending. Nothing otherwise.
func unexplainedByProfile(server string, cur watches.Sample, version string) added {
	var out added
	initial := 0
	for _, pc := range cur.Dump.PhaseCounts {
		if pc.Phase == api.PhaseInitial {
			initial += pc.Count
		}
	}
	suspects := initializingLonger(executingWatches(cur.Requests), cur.CapturedAt)
	if len(suspects) <= initial {
		return out
	}
	why := fmt.Sprintf("%d watch requests initializing past %s, but the %s profile shows %d initial-phase watchers: %s", len(suspects), StallBound, cur.Dump.Format, initial, unrecognised(version))
	for _, rq := range suspects {
		f := undecidedFinding(server, rq, cur.CapturedAt, "stuck or slow: not decided: "+why)
		f.UndecidedReason = api.UndecidedNoRecognisedWatcher
		out.findings = append(out.findings, f)
	}
	out.incomplete = append(out.incomplete, fmt.Sprintf("%s: %s", server, why))
	return out
}

// unrecognised says why a watch request has no watcher this build
// recognises.
func unrecognised(version string) string {
	v := "its release"
	if version != "" {
		v = version
	}
	return fmt.Sprintf("the watcher loop of %s may have a shape this build does not recognise", v)
}

// initializingLonger are the requests of rs executing for longer than
// StallBound at at (PastStallBound).
func initializingLonger(rs []apf.Request, at time.Time) []apf.Request {
	var out []apf.Request
	for _, rq := range rs {
		if PastStallBound(rq.StartTime, at) {
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
	// The findings share one list, of at most maxCandidatesListed: O(pool)
	// in all, not O(pool) per finding.
	why := fmt.Sprintf("%d of these %d requests, candidates of watchers in the covered part, belong to watchers in the missing part of the partial goroutine dump: stuck or slow: not decided", extra, len(pool))
	list := newCandidateList(server, pool, at, func(c api.Request, rq apf.Request) string {
		return fmt.Sprintf("APF dump_requests: executing watch of %s started %s, %s before the capture", c.User, c.StartTime.Format(time.RFC3339), roundDuration(at.Sub(rq.StartTime)))
	})
	var out []*api.Finding
	for n := 0; n < extra && n < len(pool); n++ {
		f := undecidedFinding(server, pool[0], at, why)
		f.UndecidedReason = api.UndecidedPartialDump
		f.Client = commonClient(pool)
		f.Evidence = f.Evidence[:0]
		list.apply(f)
		out = append(out, f)
	}
	return out
}
