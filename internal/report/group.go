package report

import (
	"strings"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// groupOf maps each of n findings to the index of its group in groups
// (the report's api.FindingGroup buckets, computed once by the
// diagnosis), -1 for a finding in none. Members out of range are ignored:
// a report read back from elsewhere may carry groups of other findings.
func groupOf(n int, groups []api.FindingGroup) []int {
	at := make([]int, n)
	for i := range at {
		at[i] = -1
	}
	for gi, g := range groups {
		for _, m := range g.Findings {
			if m >= 0 && m < n {
				at[m] = gi
			}
		}
	}
	return at
}

// groupedRows merges the rows of each group's members into one, where its
// first member was, and counts the findings of each returned row, as
// panicparse's buckets merge goroutines with identical stacks: 50,000
// watches initializing at once after an API server restart read as one
// row. counts is nil when no group is given, so a table without a storm
// is printed as it always was.
func groupedRows(rows [][]string, groups []api.FindingGroup) (grouped [][]string, counts []int) {
	if len(groups) == 0 {
		return rows, nil
	}
	at := groupOf(len(rows), groups)
	printed := make([]bool, len(groups))
	for i, row := range rows {
		gi := at[i]
		switch {
		case gi < 0:
			grouped, counts = append(grouped, row), append(counts, 1)
		case !printed[gi]:
			printed[gi] = true
			grouped, counts = append(grouped, row), append(counts, groups[gi].Count)
		}
	}
	return grouped, counts
}

// offsetGroups is groups with each member index moved by off: the groups
// of one cluster's report in a fleet's list of every cluster's findings.
func offsetGroups(groups []api.FindingGroup, off int) []api.FindingGroup {
	out := make([]api.FindingGroup, len(groups))
	for i, g := range groups {
		g.Findings = make([]int, len(g.Findings))
		for j, m := range groups[i].Findings {
			g.Findings[j] = m + off
		}
		out[i] = g
	}
	return out
}

// groupsTitle heads the group lines of -o wide.
const groupsTitle = "\nGroups of findings alike (one row with a COUNT in -o table):"

// groupLines writes, for -o wide (whose table has a row per finding), a
// line per group of findings alike: what -o table merges into one row with
// a COUNT, with its members' watcher goroutines.
func groupLines(t *text, r *api.Report) {
	if len(r.Groups) == 0 {
		return
	}
	t.println(groupsTitle)
	groupItems(t, "", r)
}

// fleetGroupLines is groupLines of every cluster of a fleet, each line
// led by its cluster's context, as the fleet's advice lines are.
func fleetGroupLines(t *text, fr *api.FleetReport) {
	titled := false
	for _, c := range fr.Clusters {
		if c.Report == nil || len(c.Report.Groups) == 0 {
			continue
		}
		if !titled {
			t.println(groupsTitle)
			titled = true
		}
		groupItems(t, EscapeCell(c.Context)+": ", c.Report)
	}
}

// groupItems writes a list item per group of r, led by prefix.
func groupItems(t *text, prefix string, r *api.Report) {
	for _, g := range r.Groups {
		ids := make([]int64, 0, len(g.Findings))
		for _, m := range g.Findings {
			if m >= 0 && m < len(r.Findings) {
				ids = append(ids, r.Findings[m].Watcher.GoroutineID)
			}
		}
		t.item("%s%d %s (%s) of %s, %s on %s: goroutines %s", prefix, g.Count, g.Type, g.Severity, EscapeCell(g.Client),
			orDash(EscapeCell(strings.TrimSpace(g.Verb+" "+g.Path))), EscapeCell(g.APIServer), idsAbbrev(ids, 3))
	}
}
