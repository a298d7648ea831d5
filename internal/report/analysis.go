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

// RenderReport writes a diagnosis in format f.
func RenderReport(w io.Writer, r *api.Report, f Format) error {
	switch f {
	case FormatJSON:
		return writeReportJSON(w, r)
	case FormatYAML:
		return writeStructured(w, r, f)
	case FormatTable, FormatWide:
		return renderReportTable(escapeWriter{w}, r, f == FormatWide)
	}
	return fmt.Errorf("unsupported format %q: use one of table, wide, json, yaml", f)
}

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
		for i := range r.Findings {
			b, err := json.MarshalIndent(&r.Findings[i], "    ", "  ")
			if err != nil {
				return err
			}
			bw.WriteString("    ")
			bw.Write(b)
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

func renderReportTable(w io.Writer, r *api.Report, wide bool) error {
	ew := &errWriter{w: w}
	multi := len(r.APIServers) > 1
	if len(r.Findings) > 0 {
		t := NewTable(ew, findingHeaders(multi, wide)...)
		for _, f := range r.Findings {
			if err := t.Append(findingRow(f, multi, wide)...); err != nil {
				return err
			}
		}
		if err := t.Render(); err != nil {
			return err
		}
		fmt.Fprintln(ew)
	}
	for _, a := range r.APIServers {
		if len(a.PhaseCounts) > 0 {
			fmt.Fprintf(ew, "%s: watchers by phase (a %s dump cannot tell stuck from slow)\n", a.Name, a.DumpFormat)
			t := NewTable(ew, "phase", "in sendWatchCacheEvent", "goroutines")
			for _, pc := range a.PhaseCounts {
				if err := t.Append(string(pc.Phase), strconv.FormatBool(pc.InSend), strconv.Itoa(pc.Count)); err != nil {
					return err
				}
			}
			if err := t.Render(); err != nil {
				return err
			}
			fmt.Fprintln(ew)
		}
	}
	fmt.Fprintln(ew, summaryLine(r))
	for _, line := range contextLines(r) {
		fmt.Fprintln(ew, "  "+line)
	}
	for _, line := range costLines(r) {
		fmt.Fprintln(ew, "  "+line)
	}
	for _, f := range r.Findings {
		if f.Client != nil && f.Client.Match == api.MatchAmbiguous {
			if len(f.Candidates) > 0 {
				fmt.Fprintf(ew, "  %s goroutine %d: one of these is its request: %s\n", f.Type, f.Watcher.GoroutineID, candidateList(f))
			}
		}
	}
	if levels := levelsWithSeats(r.PriorityLevels); len(levels) > 0 {
		fmt.Fprintln(ew)
		headers := []string{"priority level", "seats held by stuck watches", "executing seats", "seat limit"}
		if multi {
			headers = append([]string{"apiserver"}, headers...)
		}
		t := NewTable(ew, headers...)
		for _, p := range levels {
			row := []string{p.Name, strconv.Itoa(p.StuckSeats), floatText(p.ExecutingSeats), floatText(p.LimitSeats)}
			if multi {
				row = append([]string{p.APIServer}, row...)
			}
			if err := t.Append(row...); err != nil {
				return err
			}
		}
		if err := t.Render(); err != nil {
			return err
		}
	}
	if wide {
		for _, f := range r.Findings {
			switch {
			case f.Watcher.GoroutineID == 0 && f.Client != nil:
				fmt.Fprintf(ew, "\n%s (%s %s on %s): %s\n", f.Type, clientName(f), strings.TrimSpace(f.Client.Verb+" "+f.Client.Path), f.APIServer, f.Message)
			default:
				fmt.Fprintf(ew, "\n%s (goroutine %d on %s): %s\n", f.Type, f.Watcher.GoroutineID, f.APIServer, f.Message)
			}
			for _, e := range f.Evidence {
				fmt.Fprintf(ew, "  - %s\n", e)
			}
		}
		if len(r.UnmatchedRequests) > 0 {
			fmt.Fprintln(ew, "\nExecuting watch requests with no initial-phase watcher:")
			for _, q := range r.UnmatchedRequests {
				fmt.Fprintf(ew, "  - %s: %s %s %s (%s, %d seat(s), started %s)\n", q.APIServer, q.User, q.Verb, q.Path, q.PriorityLevel, q.Seats, q.StartTime.Format("2006-01-02T15:04:05Z"))
			}
		}
		for _, a := range r.APIServers {
			for _, n := range a.Notes {
				fmt.Fprintf(ew, "\nnote: %s: %s", a.Name, n)
			}
		}
		fmt.Fprintln(ew)
	}
	if len(r.Advice) > 0 {
		fmt.Fprintln(ew, "\nAdvice:")
		for _, a := range r.Advice {
			fmt.Fprintf(ew, "  - %s\n", a)
		}
	}
	if len(r.Warnings) > 0 {
		fmt.Fprintln(ew, "\nWarnings:")
		for _, wn := range r.Warnings {
			fmt.Fprintf(ew, "  - %s\n", wn)
		}
	}
	if len(r.Incomplete) > 0 {
		fmt.Fprintln(ew, "\nIncomplete (not decided, not healthy):")
		for _, wn := range r.Incomplete {
			fmt.Fprintf(ew, "  - %s\n", wn)
		}
	}
	return ew.err
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
	client, verbPath, seats, match := "<unmatched>", "", "", ""
	if c := f.Client; c != nil {
		client = clientName(f)
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
	dumps := 0
	for _, a := range r.APIServers {
		if a.DumpFormat != "" {
			dumps++
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
		parts = append(parts, fmt.Sprintf("%s stuck in the initial-events replay (%d goroutines, %s)", english.Count(s.StuckWatches, "watch", "watches"), s.StuckGoroutines, seats))
	case len(r.Incomplete) > 0:
		parts = append(parts, "no watch found stuck in what could be decided (incomplete)")
	case undecidable == len(r.APIServers):
		parts = append(parts, "no watch stuck in the initial-events replay (decided without a debug=2 dump)")
	default:
		parts = append(parts, "no watch stuck in the initial-events replay")
	}
	if s.SlowWatches > 0 {
		parts = append(parts, english.Count(s.SlowWatches, "slow watch", "slow watches"))
	}
	if s.UndecidedWatches > 0 {
		parts = append(parts, english.Count(s.UndecidedWatches, "watch", "watches")+" initializing too long, stuck or slow not decided")
	}
	if s.BlockedStreaming > 0 {
		parts = append(parts, english.Count(s.BlockedStreaming, "blocked streaming watch", "blocked streaming watches"))
	}
	if s.HeldAfterWatcherClosed > 0 {
		parts = append(parts, english.Count(s.HeldAfterWatcherClosed, "watch handler", "watch handlers")+" holding APF seats with no watcher left")
	}
	return fmt.Sprintf("Summary: %s; %s (%d in the initial phase) among %d goroutines on %s.",
		strings.Join(parts, ", "), english.Count(watchers, "cacheWatcher", "cacheWatchers"), initial, s.Goroutines, english.Count(servers, "API server", "API servers"))
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

// clientName is the CLIENT cell of a finding with a client: its user, or
// its candidates' users "a | b" when the match is ambiguous.
func clientName(f api.Finding) string {
	c := f.Client
	if c.Match == api.MatchAmbiguous && c.User == "" {
		if us := f.CandidateUsers(); len(us) > 0 {
			return strings.Join(us, " | ")
		}
		return "? too many candidates"
	}
	return orDash(c.User)
}

func candidateList(f api.Finding) string {
	var cs []string
	for _, c := range f.Candidates {
		cs = append(cs, fmt.Sprintf("%s (%s %s, started %s)", c.User, c.Verb, c.Path, c.StartTime.Format("15:04:05.000")))
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
