package diagnosis

import (
	"fmt"
	"slices"

	"github.com/watch-doctor/watch-doctor/internal/watches"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// added is what a step of one server's diagnosis adds to the report. The
// steps return it, add sums it in step order, and merge writes the sum
// into the report: the one place a server's diagnosis changes it.
type added struct {
	// notes go to the server's api.APIServer.Notes, after those the
	// server's info was built with.
	notes []string
	// warnings, incomplete: the report's, each prefixed with the server's
	// name by the step.
	warnings, incomplete []string
	findings             []*api.Finding
	unmatchedRequests    []api.Request
	unmatchedWatchers    []api.UnmatchedWatcher
	levels               []api.PriorityLevel
}

// add appends what b adds after what a adds.
func (a *added) add(b added) {
	a.notes = append(a.notes, b.notes...)
	a.warnings = append(a.warnings, b.warnings...)
	a.incomplete = append(a.incomplete, b.incomplete...)
	a.findings = append(a.findings, b.findings...)
	a.unmatchedRequests = append(a.unmatchedRequests, b.unmatchedRequests...)
	a.unmatchedWatchers = append(a.unmatchedWatchers, b.unmatchedWatchers...)
	a.levels = append(a.levels, b.levels...)
}

// merge writes a and the server's info into r.
func (a added) merge(r *api.Report, info api.APIServer) {
	info.Notes = append(info.Notes, a.notes...)
	r.Warnings = append(r.Warnings, a.warnings...)
	r.Incomplete = append(r.Incomplete, a.incomplete...)
	r.UnmatchedRequests = append(r.UnmatchedRequests, a.unmatchedRequests...)
	r.UnmatchedWatchers = append(r.UnmatchedWatchers, a.unmatchedWatchers...)
	r.PriorityLevels = append(r.PriorityLevels, a.levels...)
	r.Findings = slices.Grow(r.Findings, len(a.findings))
	for i, f := range a.findings {
		r.Findings = append(r.Findings, *f)
		a.findings[i] = nil // one copy of each finding alive at a time
	}
	r.APIServers = append(r.APIServers, info)
}

// pickSamples are the index of the last sample with a goroutine dump and
// of the last earlier one with a debug=2 dump when the last is debug=2
// too (two samples of one process decide by progress); -1 for none.
func pickSamples(ss []watches.Sample) (last, prev int) {
	last, prev = -1, -1
	for i := len(ss) - 1; i >= 0; i-- {
		d := ss[i].Dump
		if d == nil {
			continue
		}
		if last < 0 {
			last = i
		} else if prev < 0 && !d.Aggregated() && !ss[last].Dump.Aggregated() {
			prev = i
		}
	}
	return last, prev
}

// noDump is the diagnosis of a server without a goroutine dump (or a
// trace to decide from): nothing, and a warning saying so.
func noDump(info api.APIServer, s watches.Server) (api.APIServer, added) {
	info.Notes = append(info.Notes, "no goroutine dump: watchers cannot be examined")
	if len(s.Samples) > 0 {
		addMetricsInfo(&info, s.Samples[len(s.Samples)-1].Metrics)
	}
	return info, added{warnings: []string{fmt.Sprintf("%s: no goroutine dump given: nothing to diagnose", s.Name)}}
}

// describeDump fills the server's info from its last sample with a dump
// (when, what format, how many goroutines and watchers, how much of the
// server it covers, /metrics) and returns it with the dump's notes and
// warnings, and the report's incompleteness when the dump is partial.
func describeDump(info api.APIServer, server string, cur watches.Sample) (api.APIServer, added) {
	d := cur.Dump
	var out added
	if !cur.CapturedAt.IsZero() {
		t := cur.CapturedAt.UTC()
		info.CapturedAt = &t
	}
	info.DumpFormat = d.Format
	info.Goroutines = d.Goroutines
	out.notes = append(out.notes, d.Notes...)
	if d.Unrecognised > 0 {
		out.notes = append(out.notes, fmt.Sprintf("%d goroutines (*Cacher).Watch created are not watchers of a shape this build recognises: their watches are not decided, and no handler of theirs is counted as held", d.Unrecognised))
	}
	for _, w := range d.Warnings {
		out.warnings = append(out.warnings, fmt.Sprintf("%s: %s", server, w))
	}
	info.Coverage = coverage(d, cur.Metrics)
	if c := info.Coverage; c != nil {
		out.incomplete = append(out.incomplete, fmt.Sprintf("%s: partial goroutine dump, covering %s: %s; watches in the missing goroutines are not decided", server, c.Text(), c.Reason))
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
	}
	return info, out
}
