package diagnosis

import (
	"context"
	"fmt"

	"github.com/watch-doctor/watch-doctor/internal/watches"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// mixedSamples says why the samples a diagnosis would compare may hold
// evidence of different processes (watches.Sample.Mixed of the last or
// the earlier one: an HTTP, L7, balancer answered their fetches from
// different API servers), "" when neither says so.
func mixedSamples(samples []watches.Sample, last, prev int) string {
	for _, i := range []int{last, prev} {
		if i >= 0 && samples[i].Mixed != "" {
			return samples[i].Mixed
		}
	}
	return ""
}

// decideMixed is the route of a server whose samples reached different
// processes (mixedSamples says why): its goroutine dump, its APF dumps,
// its /metrics and its trace may each be another process's, so no
// finding takes a client, seats or a verdict from them (issue 35: two
// critical findings named a client and seats from another process's APF
// dump). Each initial-phase watcher blocked sending is
// UndecidedInitialEvents (MixedProcesses) with its goroutines alone; a
// watcher blocked streaming keeps what that one dump shows, with no
// client; and the server is incomplete whatever the dump holds.
func decideMixed(ctx context.Context, info api.APIServer, s watches.Server, cur watches.Sample, why string) (api.APIServer, added) {
	info, out := describeDump(info, s.Name, cur)
	findings, _ := judge(ctx, s.Name, cur, nil, 0)
	for _, f := range findings {
		f.Evidence = append(f.Evidence, why)
		if f.Phase != api.PhaseInitial {
			continue
		}
		f.Type, f.Severity, f.UndecidedReason = api.UndecidedInitialEvents, api.SeverityWarning, api.UndecidedMixedProcesses
		f.Message = "stuck or slow: not decided: " + mixedText
	}
	out.findings = append(out.findings, findings...)
	out.incomplete = append(out.incomplete, fmt.Sprintf("%s: %s: %s; no watch of it is decided and no client named", s.Name, why, mixedText))
	if s.Trace != nil {
		out.warnings = append(out.warnings, fmt.Sprintf("%s: execution trace %s set aside, nothing is decided from it: the samples around it reached different API server processes", s.Name, s.Trace.Source))
	}
	return info, out
}

// anyMixed says why some sample of ss may hold evidence of different
// processes, "" when none says so.
func anyMixed(ss []watches.Sample) string {
	for _, sm := range ss {
		if sm.Mixed != "" {
			return sm.Mixed
		}
	}
	return ""
}

// decideMixedAPF is decideMixed for a server without a goroutine dump
// (profiling off: APF dump_requests and /metrics only): each APF dump
// may be another process's, so no row gives a finding its client, seats
// or verdict (issue 35: the APF-only path still named the client). Each
// executing watch initializing past StallBound at the last sample is
// UndecidedInitialEvents (MixedProcesses) with no client, its resource
// and age in its evidence; the server is incomplete whatever the dumps
// list.
func decideMixedAPF(ctx context.Context, info api.APIServer, s watches.Server, why string) (api.APIServer, added) {
	var out added
	_, b := traceSamples(s.Samples)
	info.DumpFormat = FormatAPF
	if !b.CapturedAt.IsZero() {
		at := b.CapturedAt.UTC()
		info.CapturedAt = &at
	}
	info.Notes = append(info.Notes, "evidence: APF dump_requests and /metrics only, of samples that reached different API server processes")
	for _, rq := range initializingLonger(executingWatches(b.Requests), b.CapturedAt) {
		if done(ctx) {
			break
		}
		age := "of unknown age (no capture time)"
		if !b.CapturedAt.IsZero() {
			age = "initializing for " + roundDuration(b.CapturedAt.Sub(rq.StartTime))
		}
		out.findings = append(out.findings, &api.Finding{
			Type: api.UndecidedInitialEvents, Severity: api.SeverityWarning, APIServer: s.Name, Phase: api.PhaseInitial,
			GoroutineIDs: []int64{}, UndecidedReason: api.UndecidedMixedProcesses,
			Message:  "stuck or slow: not decided: " + mixedText,
			Evidence: []string{fmt.Sprintf("an APF dump_requests read through the load balancer lists a watch of %s %s, of whichever API server process answered it", resourceOrUnknown(rq), age), why},
		})
	}
	out.incomplete = append(out.incomplete, fmt.Sprintf("%s: %s: %s; no watch of it is decided and no client named", s.Name, why, mixedText))
	return info, out
}

// resourceOrUnknown is the resource a row watches, quoted.
func resourceOrUnknown(rq apf.Request) string {
	if rq.Resource == "" {
		return "an unknown resource"
	}
	return fmt.Sprintf("%q", rq.Resource)
}

// mixedText says what evidence from different processes cannot tell.
const mixedText = "the sample's goroutine dump, APF dumps and /metrics may each come from a different API server process, so none of them names this watch's client, its seats or whether it progresses"
