package report

import (
	"strconv"
	"strings"

	"github.com/watch-doctor/watch-doctor/internal/english"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// findingsTable writes the findings table; cluster, when set, is the
// CLUSTER cell of each finding (a fleet report). In table format, without
// NoHeaders, the members of each of groups (the report's
// api.FindingGroup buckets) are one row with a COUNT: a relist storm reads
// as one line (see groupedRows).
func findingsTable(t *text, findings []api.Finding, groups []api.FindingGroup, cluster []string, multi bool) error {
	if len(findings) == 0 {
		return nil
	}
	wide := t.opts.wide()
	headers := findingHeaders(multi, wide)
	if cluster != nil {
		headers = append([]string{"cluster"}, headers...)
	}
	rows := make([][]string, len(findings))
	for i, f := range findings {
		rows[i] = findingRow(f, multi, wide)
		if cluster != nil {
			rows[i] = append([]string{cluster[i]}, rows[i]...)
		}
	}
	var counts []int
	if !wide && !t.opts.NoHeaders {
		rows, counts = groupedRows(rows, groups)
	}
	if counts != nil {
		headers = append([]string{"count"}, headers...)
	}
	tb := t.table(t.opts.NoHeaders, headers...)
	for i, row := range rows {
		if counts != nil {
			row = append([]string{strconv.Itoa(counts[i])}, row...)
		}
		if err := tb.append(row...); err != nil {
			return err
		}
	}
	if err := tb.render(); err != nil {
		return err
	}
	if counts != nil {
		t.printf("(%d findings in %s: COUNT says how many are identical; -o wide or -o json lists each)\n", len(findings), english.Count(len(rows), "row", "rows"))
	}
	return nil
}

// findingHeaders are the columns of the findings table; multi adds the
// API server, wide the details.
func findingHeaders(multi, wide bool) []string {
	headers := []string{"finding", "severity", "client", "verb+path", "phase", "blocked", "seats", "goroutines", "match"}
	if multi {
		headers = append([]string{"apiserver"}, headers...)
	}
	if wide {
		headers = append(headers, "namespace", "resource", "priority level", "flow schema", "started", "conn", "goroutine ids", "handler")
	}
	return headers
}

// findingRow is one finding under findingHeaders(multi, wide).
func findingRow(f api.Finding, multi, wide bool) []string {
	client, verbPath, seats, match := f.ClientLabel(), "", "", ""
	if c := f.Client; c != nil {
		verbPath = strings.TrimSpace(c.Verb + " " + c.Path)
		if c.Seats > 0 {
			seats = strconv.Itoa(c.Seats)
		}
		match = string(c.Match)
	}
	row := []string{string(f.Type), string(f.Severity), client, orDash(verbPath), string(f.Phase), blockedText(f.BlockedMinutes), orDash(seats), strconv.Itoa(len(f.GoroutineIDs)), orDash(match)}
	if multi {
		row = append([]string{f.APIServer}, row...)
	}
	if wide {
		ns, res, pl, fs, started := "", "", "", "", ""
		if c := f.Client; c != nil {
			ns, res, pl, fs = c.Namespace, c.Resource, c.PriorityLevel, c.FlowSchema
			if c.StartTime != nil {
				started = c.StartTime.Format("2006-01-02T15:04:05Z")
			}
		}
		handler := ""
		if h := f.Watcher.Handler; h != nil {
			handler = string(h.Block)
		}
		row = append(row, orDash(ns), orDash(res), orDash(pl), orDash(fs), orDash(started), orDash(idText(f.Connection)), joinIDs(f.GoroutineIDs), orDash(handler))
	}
	return row
}
