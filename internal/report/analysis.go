package report

import (
	"strconv"
	"strings"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// printReport writes a diagnosis as a table (wide: with the details of
// each finding). Under NoHeaders it is the findings' rows alone.
func printReport(t *text, r *api.Report) error {
	multi := len(r.APIServers) > 1
	if t.opts.NoHeaders {
		return findingsTable(t, r.Findings, r.Groups, nil, multi)
	}
	if len(r.Findings) > 0 {
		if err := findingsTable(t, r.Findings, r.Groups, nil, multi); err != nil {
			return err
		}
		t.println()
	}
	if err := phaseTables(t, r); err != nil {
		return err
	}
	t.println(summaryLine(r))
	if r.Instances != nil {
		t.println("  Instances: " + r.Instances.Text())
	}
	for _, line := range contextLines(r) {
		t.println("  " + line)
	}
	for _, line := range costLines(r) {
		t.println("  " + line)
	}
	candidateLines(t, r.Findings, r.Groups)
	if err := levelsTable(t, r, multi); err != nil {
		return err
	}
	if t.opts.wide() {
		wideDetails(t, r)
	}
	lists(t, "\nAdvice:", r.Advice)
	lists(t, "\nWarnings:", r.Warnings)
	lists(t, "\nIncomplete (not decided, not healthy):", r.Incomplete)
	return nil
}

// phaseTables writes, per API server decided without a debug=2 dump, its
// watchers by phase.
func phaseTables(t *text, r *api.Report) error {
	for _, a := range r.APIServers {
		if len(a.PhaseCounts) == 0 {
			continue
		}
		t.printf("%s: watchers by phase (a %s dump cannot tell stuck from slow)\n", a.Name, a.DumpFormat)
		tb := t.table(false, "phase", "in sendWatchCacheEvent", "goroutines")
		for _, pc := range a.PhaseCounts {
			if err := tb.append(string(pc.Phase), strconv.FormatBool(pc.InSend), strconv.Itoa(pc.Count)); err != nil {
				return err
			}
		}
		if err := tb.render(); err != nil {
			return err
		}
		t.println()
	}
	return nil
}

// levelsTable writes the priority levels holding seats.
func levelsTable(t *text, r *api.Report, multi bool) error {
	levels := levelsWithSeats(r.PriorityLevels)
	if len(levels) == 0 {
		return nil
	}
	t.println()
	headers := []string{"priority level", "seats held by stuck watches", "executing seats", "seat limit"}
	if multi {
		headers = append([]string{"apiserver"}, headers...)
	}
	tb := t.table(false, headers...)
	for _, p := range levels {
		row := []string{p.Name, strconv.Itoa(p.StuckSeats), floatText(p.ExecutingSeats), floatText(p.LimitSeats)}
		if multi {
			row = append([]string{p.APIServer}, row...)
		}
		if err := tb.append(row...); err != nil {
			return err
		}
	}
	return tb.render()
}

// wideDetails writes what -o wide adds below the tables: each finding's
// message and evidence, the groups of findings alike, the unmatched
// requests, the servers' notes.
func wideDetails(t *text, r *api.Report) {
	for _, f := range r.Findings {
		switch {
		case f.Watcher.GoroutineID == 0 && f.Client != nil:
			t.printf("\n%s (%s %s on %s): %s\n", f.Type, EscapeCell(f.ClientLabel()), EscapeCell(strings.TrimSpace(f.Client.Verb+" "+f.Client.Path)), EscapeCell(f.APIServer), f.Message)
		default:
			t.printf("\n%s (goroutine %d on %s): %s\n", f.Type, f.Watcher.GoroutineID, EscapeCell(f.APIServer), f.Message)
		}
		for _, e := range f.Evidence {
			t.item("%s", e)
		}
	}
	groupLines(t, r)
	if len(r.UnmatchedRequests) > 0 {
		t.println("\nExecuting watch requests with no initial-phase watcher:")
		for _, q := range r.UnmatchedRequests {
			t.item("%s: %s %s %s (%s, %d seat(s), started %s)", EscapeCell(q.APIServer), EscapeCell(q.User), EscapeCell(q.Verb), EscapeCell(q.Path), EscapeCell(q.PriorityLevel), q.Seats, q.StartTime.Format("2006-01-02T15:04:05Z"))
		}
	}
	for _, a := range r.APIServers {
		for _, n := range a.Notes {
			t.printf("\nnote: %s: %s", EscapeCell(a.Name), n)
		}
	}
	t.println()
}

// lists writes a titled list, when it has items.
func lists(t *text, title string, items []string) {
	if len(items) == 0 {
		return
	}
	t.println(title)
	for _, it := range items {
		t.item("%s", it)
	}
}

func levelsWithSeats(ls []api.PriorityLevel) []api.PriorityLevel {
	var out []api.PriorityLevel
	for _, l := range ls {
		if l.StuckSeats > 0 || l.ExecutingSeats != nil {
			out = append(out, l)
		}
	}
	return out
}
