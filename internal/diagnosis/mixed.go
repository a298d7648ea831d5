package diagnosis

import (
	"context"
	"fmt"

	"github.com/watch-doctor/watch-doctor/internal/watches"
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

// mixedText says what evidence from different processes cannot tell.
const mixedText = "the sample's goroutine dump, APF dumps and /metrics may each come from a different API server process, so none of them names this watch's client, its seats or whether it progresses"
