package diagnosis

import (
	"fmt"

	"github.com/watch-doctor/watch-doctor/internal/watches"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// refineWithTrace sharpens the dump route's verdicts on initial-phase
// watchers with the trace of the same process: a goroutine id names the
// same goroutine in both (ids are never reused while a goroutine lives),
// so no id order is involved. The dump keeps what ties a watcher to its
// request (parents, itab words, events); the trace says whether it moved.
// A watcher the dumps call slow that the trace saw with no state change is
// stuck; one they call stuck stays stuck (the trace is never used to
// weaken a verdict), with a note when the two disagree. It returns notes
// for the API server.
func refineWithTrace(findings []*api.Finding, t *watches.Trace) []string {
	byID := map[int64]watches.TraceGoroutine{}
	for _, g := range t.Goroutines {
		if g.Class == watches.TraceWatcher {
			byID[g.ID] = g
		}
	}
	tw := judgeTraceGoroutines(t)
	stuck, progressing := idSet(tw.stuck), idSet(tw.progressing)
	tf := traceFindings{t: t}
	var notes []string
	for _, f := range findings {
		id := f.Watcher.GoroutineID
		g, seen := byID[id]
		if f.Phase != api.PhaseInitial || !seen {
			continue
		}
		line := goroutineEvidence(g, t.Window)
		switch {
		case stuck[id] && f.Type == api.SlowInitialEvents:
			was := f.Message
			tv := tf.finding(verdictStuck, []watches.TraceGoroutine{g})
			f.Type, f.Severity, f.Message = tv.Type, tv.Severity, tv.Message
			f.Evidence = append(f.Evidence, "decided by the "+EvidenceTrace+" "+t.Source+": "+line, "the debug=2 samples alone: "+was)
		case progressing[id] && f.Type == api.StuckInitialEvents:
			f.Evidence = append(f.Evidence, "the "+EvidenceTrace+" disagrees, and is not used to weaken the verdict: "+line)
			notes = append(notes, fmt.Sprintf("watcher goroutine %d: stuck by the debug=2 samples, yet it changed state in the execution trace: check that the trace was taken between the samples", id))
		case progressing[id] && f.Type == api.SlowInitialEvents:
			f.Severity = api.SeverityInfo
			f.Evidence = append(f.Evidence, "progress confirmed by the "+EvidenceTrace+" "+t.Source+": "+line)
		default:
			f.Evidence = append(f.Evidence, "the "+EvidenceTrace+" "+t.Source+": "+line)
		}
	}
	return notes
}

func idSet(gs []watches.TraceGoroutine) map[int64]bool {
	m := make(map[int64]bool, len(gs))
	for _, g := range gs {
		m[g.ID] = true
	}
	return m
}
