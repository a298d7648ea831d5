package report

import (
	"fmt"
	"strings"

	"github.com/watch-doctor/watch-doctor/internal/english"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

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
	for _, row := range api.FindingTypes() {
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
