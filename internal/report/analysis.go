package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/watch-doctor/watch-doctor/internal/english"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// writeReportJSON writes what writeStructured writes for a report, byte for
// byte, without holding the whole document in memory: the findings (tens
// of thousands on a big server) are encoded one at a time.
func writeReportJSON(w io.Writer, r *api.Report) error {
	rest := *r
	rest.Findings = nil
	head, err := json.MarshalIndent(&rest, "", "  ")
	if err != nil {
		return err
	}
	const marker = "\n  \"findings\": null"
	before, after, ok := bytes.Cut(head, []byte(marker))
	if !ok {
		return fmt.Errorf("encoding json: no findings field in the report")
	}
	bw := bufio.NewWriter(w)
	bw.Write(before)
	bw.WriteString(marker[:len(marker)-len("null")])
	if len(r.Findings) == 0 {
		bw.WriteString("[]")
	} else {
		bw.WriteString("[\n")
		// One encoder and one buffer for all findings: MarshalIndent
		// allocates both per finding, which a relist storm (50,000
		// findings, 128 MB) paid for in garbage collection. The bytes are
		// the same (both escape HTML, both indent after the first line);
		// appendIndent indents without json.Indent's validating scan.
		var buf bytes.Buffer
		var out []byte
		enc := json.NewEncoder(&buf)
		for i := range r.Findings {
			buf.Reset()
			if err := enc.Encode(&r.Findings[i]); err != nil {
				return err
			}
			out = appendIndent(append(out[:0], "    "...), bytes.TrimSuffix(buf.Bytes(), []byte("\n")), "    ", "  ")
			bw.Write(out)
			if i < len(r.Findings)-1 {
				bw.WriteByte(',')
			}
			bw.WriteByte('\n')
		}
		bw.WriteString("  ]")
	}
	bw.Write(after)
	bw.WriteByte('\n')
	return bw.Flush()
}

// printReport writes a diagnosis as a table (wide: with the details of
// each finding). Under NoHeaders it is the findings' rows alone.
func printReport(t *text, r *api.Report) error {
	multi := len(r.APIServers) > 1
	if t.opts.NoHeaders {
		return findingsTable(t, r.Findings, nil, multi)
	}
	if len(r.Findings) > 0 {
		if err := findingsTable(t, r.Findings, nil, multi); err != nil {
			return err
		}
		t.println()
	}
	if err := phaseTables(t, r); err != nil {
		return err
	}
	t.println(summaryLine(r))
	for _, line := range contextLines(r) {
		t.println("  " + line)
	}
	for _, line := range costLines(r) {
		t.println("  " + line)
	}
	candidateLines(t, r.Findings)
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

// findingsTable writes the findings table; cluster, when set, is the
// CLUSTER cell of each finding (a fleet report). In table format, without
// NoHeaders, identical rows are one row with a COUNT (a relist storm
// reads as one line; see groupRows).
func findingsTable(t *text, findings []api.Finding, cluster []string, multi bool) error {
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
		rows, counts = groupRows(rows)
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
// message and evidence, the unmatched requests, the servers' notes.
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

func summaryLine(r *api.Report) string {
	s := r.Summary
	servers := len(r.APIServers)
	watchers, initial := 0, 0
	for _, a := range r.APIServers {
		watchers += a.Watchers
		initial += a.InitialPhase
	}
	var parts []string
	undecidable := 0
	for _, a := range r.APIServers {
		if len(a.PhaseCounts) > 0 {
			undecidable++
		}
	}
	dumps, apfOnly := 0, 0
	for _, a := range r.APIServers {
		if a.DumpFormat != "" {
			dumps++
		}
		if a.DumpFormat == api.DumpFormatAPF {
			apfOnly++
		}
	}
	switch {
	case dumps == 0:
		parts = append(parts, "nothing diagnosed: no goroutine dump")
	case s.StuckWatches > 0:
		seats := fmt.Sprintf("%d APF seat(s) held", s.StuckSeats)
		switch {
		case s.StuckUnattributed == s.StuckWatches:
			seats = "APF seats unknown: no request attributed"
		case s.StuckUnattributed > 0:
			seats += fmt.Sprintf(" by the %d attributed to a request", s.StuckWatches-s.StuckUnattributed)
		}
		stuck, _ := api.FindingTypeOf(api.StuckInitialEvents)
		count := english.Count(s.StuckWatches, stuck.One, stuck.Many)
		if len(r.Incomplete) > 0 {
			// What was not decided (past the trace parser's cap, a
			// partial dump) may be stuck too: a lower bound.
			count = "at least " + count
		}
		parts = append(parts, fmt.Sprintf("%s (%d goroutines, %s)", count, s.StuckGoroutines, seats))
	case len(r.Incomplete) > 0:
		parts = append(parts, "no watch found stuck in what could be decided (incomplete)")
	case undecidable == len(r.APIServers):
		parts = append(parts, "no watch stuck in the initial-events replay (decided without a debug=2 dump)")
	default:
		parts = append(parts, "no watch stuck in the initial-events replay")
	}
	// The stuck watches come first, worded above with their seats; every
	// other finding type is named by its row, in the table's order.
	for _, row := range api.FindingTypes {
		if n := *row.Count(&s); n > 0 && row.Type != api.StuckInitialEvents {
			parts = append(parts, english.Count(n, row.One, row.Many))
		}
	}
	if apfOnly == servers && servers > 0 {
		return fmt.Sprintf("Summary: %s; no goroutine dump (APF dump_requests and /metrics only): cacheWatchers not seen, %d goroutines (go_goroutines) on %s.",
			strings.Join(parts, ", "), s.Goroutines, english.Count(servers, "API server", "API servers"))
	}
	tail := ""
	if apfOnly > 0 {
		tail = fmt.Sprintf(" (%d of them without a goroutine dump: APF dump_requests and /metrics only)", apfOnly)
	}
	return fmt.Sprintf("Summary: %s; %s (%d in the initial phase) among %d goroutines on %s%s.",
		strings.Join(parts, ", "), english.Count(watchers, "cacheWatcher", "cacheWatchers"), initial, s.Goroutines, english.Count(servers, "API server", "API servers"), tail)
}

// contextLines puts the findings beside the server's own totals from
// /metrics: its goroutines and memory, and how many watchers the resources
// of the findings have.
func contextLines(r *api.Report) []string {
	var out []string
	for _, a := range r.APIServers {
		resources := map[string]bool{}
		for _, f := range r.Findings {
			if f.APIServer == a.Name && f.Client != nil && f.Client.Resource != "" {
				resources[f.Client.Resource] = true
			}
		}
		var parts []string
		if a.ResidentMemoryBytes > 0 {
			parts = append(parts, byteSize(a.ResidentMemoryBytes)+" resident")
		}
		for _, rc := range a.WatchersByResource {
			if rc.Group == "" && resources[rc.Resource] {
				parts = append(parts, fmt.Sprintf("%s has %.0f watch requests open (apiserver_longrunning_requests)", rc.Resource, rc.Count))
			}
		}
		if len(parts) > 0 {
			out = append(out, fmt.Sprintf("%s: %d goroutines, %s", a.Name, a.Goroutines, strings.Join(parts, ", ")))
		}
	}
	return out
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

// candidateLines names, under the summary, the candidate requests of each
// ambiguous finding, in the order of the findings. In table format at
// least groupAtLeast findings of one type with the same candidates share
// one line, where the first of them was, naming a few of their goroutines
// and counting the rest; -o wide keeps a line per finding.
func candidateLines(t *text, findings []api.Finding) {
	type group struct {
		ids     []int64
		printed bool
	}
	keys := make([]string, len(findings))
	groups := map[string]*group{}
	for i, f := range findings {
		if f.Client == nil || f.Client.Match != api.MatchAmbiguous || len(f.Candidates) == 0 {
			continue
		}
		keys[i] = string(f.Type) + "\x00" + candidateList(f)
		g := groups[keys[i]]
		if g == nil {
			g = &group{}
			groups[keys[i]] = g
		}
		g.ids = append(g.ids, f.Watcher.GoroutineID)
	}
	for i, f := range findings {
		g := groups[keys[i]]
		switch {
		case keys[i] == "":
		case len(g.ids) < groupAtLeast || t.opts.wide():
			t.printf("  %s goroutine %d: one of these is its request: %s\n", f.Type, f.Watcher.GoroutineID, candidateList(f))
		case !g.printed:
			g.printed = true
			t.printf("  %s goroutines %s: one of these is each one's request: %s\n", f.Type, idsAbbrev(g.ids, 3), candidateList(f))
		}
	}
}

// idsAbbrev lists the first n ids and counts the others.
func idsAbbrev(ids []int64, n int) string {
	if len(ids) <= n {
		return joinIDs(ids)
	}
	return fmt.Sprintf("%s and %d more", joinIDs(ids[:n]), len(ids)-n)
}

func candidateList(f api.Finding) string {
	var cs []string
	for _, c := range f.Candidates {
		cs = append(cs, fmt.Sprintf("%s (%s %s, started %s)", EscapeCell(c.User), EscapeCell(c.Verb), EscapeCell(c.Path), c.StartTime.Format("15:04:05.000")))
	}
	return strings.Join(cs, "; ")
}

func blockedText(m *int) string {
	switch {
	case m == nil:
		return "?"
	case *m < 1:
		return "<1m"
	}
	return fmt.Sprintf(">=%dm", *m)
}

func floatText(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'f', -1, 64)
}

func idText(id int64) string {
	if id == 0 {
		return ""
	}
	return strconv.FormatInt(id, 10)
}

func joinIDs(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(s, ",")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// errWriter keeps the first write error so renderers can check once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
