package diagnosis

import (
	"fmt"
	"sort"

	"github.com/watch-doctor/watch-doctor/internal/english"
	"github.com/watch-doctor/watch-doctor/internal/watches"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// No count exceeds what APF lists: a watch in its initial phase holds an
// APF seat until its initial events are sent, so when APF dumps were
// read, the watches a server's findings count in that phase (stuck,
// slow, undecided, waiting for the cache) are at most the executing watch
// requests they list. Evidence that shows more (a trace or dump within
// traceAside's slack, a watcher outliving its request, an exempt one)
// cannot say which of its watchers the rows are; the counts are APF's.

// seatHolding are the finding types of a watch that holds its APF seat:
// one executing watch request each.
var seatHolding = map[api.FindingType]bool{
	api.StuckInitialEvents: true, api.SlowInitialEvents: true,
	api.UndecidedInitialEvents: true, api.WaitingForWatchCache: true,
}

// clampToAPF keeps at most as many seat-holding findings of s as the
// most executing watch requests its APF dumps list (mostWatchRows), the
// most severe first (fail closed), then those tied to a request; the
// watchers of the others are listed unmatched, and the report is
// incomplete: they are not decided. A note says the count is APF's. It
// clamps the server's initial-phase count and the seats its priority
// levels count held the same way. Nothing changes when no APF dump was
// read.
func clampToAPF(s watches.Server, info *api.APIServer, out *added) {
	rows, ok := mostWatchRows(traceSamples(s.Samples))
	if !ok {
		return
	}
	var holding []int
	for i, f := range out.findings {
		if seatHolding[f.Type] {
			holding = append(holding, i)
		}
	}
	initial := info.InitialPhase
	info.InitialPhase = min(info.InitialPhase, rows)
	if len(holding) <= rows {
		if initial > rows {
			out.notes = append(out.notes, apfClampNote(evidenceWord(s), initial, rows, 0))
		}
		return
	}
	sort.SliceStable(holding, func(a, b int) bool {
		fa, fb := out.findings[holding[a]], out.findings[holding[b]]
		if ra, rb := fa.Severity.Rank(), fb.Severity.Rank(); ra != rb {
			return ra > rb
		}
		return tiedRank(fa) < tiedRank(fb)
	})
	drop := map[int]bool{}
	for _, i := range holding[rows:] {
		drop[i] = true
	}
	kept := out.findings[:0]
	for i, f := range out.findings {
		if !drop[i] {
			kept = append(kept, f)
			continue
		}
		unseat(out.levels, f)
		if w := f.Watcher; w.GoroutineID != 0 {
			out.unmatchedWatchers = append(out.unmatchedWatchers, api.UnmatchedWatcher{APIServer: f.APIServer, GoroutineID: w.GoroutineID, State: w.State, WaitMinutes: w.WaitMinutes})
		}
	}
	out.findings = kept
	out.incomplete = append(out.incomplete, s.Name+": "+apfClampNote(evidenceWord(s), max(initial, len(holding)), rows, len(drop)))
}

// apfClampNote says the evidence showed n initial-phase watches where APF
// lists rows, and that the counts are APF's; dropped findings are not
// counted.
func apfClampNote(evidence string, n, rows, dropped int) string {
	s := fmt.Sprintf("the %s shows %d watches in their initial phase, more than the %s the APF dumps list: each count here is APF's (at most %d)", evidence, n, english.Count(rows, "executing watch request", "executing watch requests"), rows)
	if dropped > 0 {
		s += fmt.Sprintf("; %s past it not counted, their watches not decided and their watchers listed unmatched", english.Count(dropped, "finding", "findings"))
	}
	return s
}

// evidenceWord names what the server's watchers were read from.
func evidenceWord(s watches.Server) string {
	last, _ := pickSamples(s.Samples)
	if useTrace, _ := traceChoice(s, last); useTrace {
		return EvidenceTrace
	}
	return "goroutine dump"
}

// tiedRank orders findings by how firmly they are tied to one request:
// exact, likely, ambiguous, none.
func tiedRank(f *api.Finding) int {
	if f.Client == nil {
		return 3
	}
	switch f.Client.Match {
	case api.MatchExact:
		return 0
	case api.MatchLikely:
		return 1
	case api.MatchAmbiguous:
		return 2
	}
	return 3
}

// unseat takes the seats a dropped stuck finding counted off its
// priority level (priorityLevels).
func unseat(levels []api.PriorityLevel, f *api.Finding) {
	if f.Type != api.StuckInitialEvents || !f.SeatsKnown() {
		return
	}
	for i := range levels {
		if levels[i].Name == f.Client.PriorityLevel {
			levels[i].StuckSeats -= f.Client.Seats
		}
	}
}
