package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/english"
	"github.com/watch-doctor/watch-doctor/pkg/metrics"
)

// printMetrics writes the watch metrics of one or more API servers: per
// server a summary line, the resources that have watchers or watch-cache
// activity (wide: all resources, more columns), the priority levels, and
// below them the blind spots of the columns, the missing and unknown
// metrics, and notes. With two samples the counter columns become rates
// per second. Under NoHeaders it is the resources' rows alone.
func printMetrics(t *text, r metrics.Report) error {
	if t.opts.NoHeaders {
		return metricsResources(t, r)
	}
	if err := metricsSummary(t, r); err != nil {
		return err
	}
	t.println()
	if err := metricsResources(t, r); err != nil {
		return err
	}
	if err := metricsLevels(t, r); err != nil {
		return err
	}
	metricsFootnotes(t, r)
	return nil
}

// metricsColumns prefixes cells with the server's name when there are
// several servers.
type metricsColumns bool

func (multi metricsColumns) row(name string, cells ...string) []string {
	if multi {
		return append([]string{name}, cells...)
	}
	return cells
}

func (multi metricsColumns) headers(h ...string) []string {
	if multi {
		return append([]string{"apiserver"}, h...)
	}
	return h
}

// metricsSummary is one line per server.
func metricsSummary(t *text, r metrics.Report) error {
	sum := t.table(false, "apiserver", "release", "goroutines", "memory", "started", "sampling")
	for _, a := range r.APIServers {
		snap := a.Current()
		if snap == nil {
			msg := "no sample"
			if a.Err != nil {
				msg = a.Err.Error()
			}
			if err := sum.append(a.Name, "error: "+msg); err != nil {
				return err
			}
			continue
		}
		sampling := "one sample"
		if a.Rates != nil {
			sampling = "rates over " + a.Rates.Interval.Round(time.Second).String()
			if a.Rates.Restarted {
				sampling += " (restarted)"
			}
		}
		if err := sum.append(a.Name, snap.Version.String(), count(snap.Goroutines), byteSize(snap.ResidentMemoryBytes),
			started(snap.ProcessStartTime, snap.CapturedAt), sampling); err != nil {
			return err
		}
	}
	return sum.render()
}

// metricsResources is the resources table (and how many were left out).
func metricsResources(t *text, r metrics.Report) error {
	wide, multi := t.opts.wide(), metricsColumns(len(r.APIServers) > 1)
	anyRates := false
	for _, a := range r.APIServers {
		if a.Rates != nil {
			anyRates = true
		}
	}
	var cols []string
	if anyRates {
		cols = []string{"resource", "watchers", "init events/s[1]", "terminated/s[2]", "dispatched/s", "cache capacity"}
		if wide {
			cols = append(cols, "watchers change", "received/s", "watch events/s", "watch bytes/s", "watch lists/s", "cache inits/s", "init events[1]", "terminated[2]")
		}
	} else {
		cols = []string{"resource", "watchers", "init events[1]", "terminated watchers[2]", "events dispatched", "cache capacity"}
		if wide {
			cols = append(cols, "events received", "watch events", "watch bytes", "watch lists", "cache inits", "cache rv")
		}
	}
	rt := t.table(t.opts.NoHeaders, multi.headers(cols...)...)
	shown, hidden := 0, 0
	for _, a := range r.APIServers {
		snap := a.Current()
		if snap == nil {
			continue
		}
		rates := map[string]metrics.ResourceRate{}
		if a.Rates != nil {
			for _, rr := range a.Rates.Resources {
				rates[rr.Current.Key()] = rr
			}
		}
		for _, res := range snap.Resources {
			rr, hasRate := rates[res.Key()]
			if !hasRate {
				rr = metrics.UnknownRates()
			}
			if !wide && !metricsActive(res, rr, a.Rates != nil) {
				hidden++
				continue
			}
			shown++
			var row []string
			if anyRates {
				row = []string{res.Name(), count(res.Watchers), rate(rr.InitEventsPerSecond), rate(rr.TerminatedWatchersPerSecond),
					rate(rr.EventsDispatchedPerSecond), count(res.CacheCapacity)}
				if wide {
					row = append(row, signed(rr.WatchersChange), rate(rr.EventsReceivedPerSecond), rate(rr.WatchEventsPerSecond),
						byteRate(rr.WatchEventBytesPerSecond), rate(rr.WatchListsPerSecond), rate(rr.CacheInitializationsPerSecond),
						count(res.InitEvents), count(res.TerminatedWatchers))
				}
			} else {
				row = []string{res.Name(), count(res.Watchers), count(res.InitEvents), count(res.TerminatedWatchers),
					count(res.EventsDispatched), count(res.CacheCapacity)}
				if wide {
					row = append(row, count(res.EventsReceived), count(res.WatchEvents), byteSize(res.WatchEventBytes),
						count(res.WatchLists), count(res.CacheInitializations), count(res.CacheResourceVersion))
				}
			}
			if err := rt.append(multi.row(a.Name, row...)...); err != nil {
				return err
			}
		}
	}
	if shown > 0 {
		if err := rt.render(); err != nil {
			return err
		}
	}
	if hidden > 0 && !t.opts.NoHeaders {
		t.printf("(%d more %s without watchers or watch cache activity: -o wide shows all)\n", hidden, english.Plural(hidden, "resource", "resources"))
	}
	return nil
}

// metricsLevels is the priority levels table.
func metricsLevels(t *text, r metrics.Report) error {
	wide, multi := t.opts.wide(), metricsColumns(len(r.APIServers) > 1)
	var plCols []string
	plCols = []string{"priority level", "executing seats[3]", "limit seats", "used", "executing requests"}
	if wide {
		plCols = append(plCols, "flow schemas (seats/requests)")
	}
	pt := t.table(false, multi.headers(plCols...)...)
	levels := 0
	for _, a := range r.APIServers {
		snap := a.Current()
		if snap == nil {
			continue
		}
		for _, pl := range snap.PriorityLevels {
			levels++
			row := []string{pl.Name, count(pl.ExecutingSeats), count(pl.LimitSeats), percent(pl.ExecutingSeats, pl.LimitSeats), count(pl.ExecutingRequests)}
			if wide {
				var fs []string
				for _, f := range pl.FlowSchemas {
					fs = append(fs, fmt.Sprintf("%s=%s/%s", f.Name, count(f.ExecutingSeats), count(f.ExecutingRequests)))
				}
				row = append(row, orDash(strings.Join(fs, ",")))
			}
			if err := pt.append(multi.row(a.Name, row...)...); err != nil {
				return err
			}
		}
	}
	if levels == 0 {
		return nil
	}
	t.println()
	return pt.render()
}

// metricsFootnotes: blind spots (once), then per-server missing, unknown,
// notes.
func metricsFootnotes(t *text, r metrics.Report) {
	wide, multi := t.opts.wide(), len(r.APIServers) > 1
	marks := map[metrics.MetricID]string{metrics.InitEvents: "[1]", metrics.TerminatedWatchers: "[2]", metrics.ExecutingSeats: "[3]"}
	seen := map[metrics.MetricID]bool{}
	var blind []string
	for _, a := range r.APIServers {
		if snap := a.Current(); snap != nil {
			for _, b := range snap.BlindSpots {
				if !seen[b.Metric] {
					seen[b.Metric] = true
					blind = append(blind, fmt.Sprintf("%s %s %s [%s]", marks[b.Metric], metricsNameFor(b.Metric), b.Text, b.Source))
				}
			}
		}
	}
	if len(blind) > 0 {
		t.println()
		t.println("Blind spots:")
		for _, b := range blind {
			t.printf("  %s\n", b)
		}
	}
	for _, a := range r.APIServers {
		snap := a.Current()
		if snap == nil {
			continue
		}
		prefix := ""
		if multi {
			prefix = a.Name + ": "
		}
		if len(snap.Missing) > 0 {
			t.println()
			t.printf("%sMissing metrics:\n", prefix)
			for _, m := range snap.Missing {
				t.printf("  %s: %s\n", strings.Join(m.Names, ", "), m.Reason)
			}
		}
		if len(snap.Unknown) > 0 {
			t.println()
			t.printf("%sUnknown metrics (not used):\n", prefix)
			for _, u := range snap.Unknown {
				t.printf("  %s{%s}: %s\n", u.Name, strings.Join(u.Labels, ","), u.Reason)
			}
		}
		notes := append([]string(nil), snap.Notes...)
		if a.Rates != nil {
			notes = append(notes, a.Rates.Notes...)
		}
		if len(notes) > 0 {
			t.println()
			t.printf("%sNotes:\n", prefix)
			for _, n := range notes {
				t.printf("  %s\n", n)
			}
		}
		if wide && len(snap.Version.Evidence) > 0 {
			t.println()
			t.printf("%sVersion evidence:\n", prefix)
			for _, e := range snap.Version.Evidence {
				t.printf("  %s\n", e)
			}
		}
	}
}

// active reports whether a resource belongs in the narrow table: it has
// watchers, or watchers were replayed to or terminated on it.
func metricsActive(res metrics.Resource, rr metrics.ResourceRate, rates bool) bool {
	if res.Watchers > 0 || res.TerminatedWatchers > 0 || res.InitEvents > 0 {
		return true
	}
	// Not the dispatch rate: every cached resource dispatches a few events
	// a minute (etcd progress notifications count too).
	return rates && (rr.InitEventsPerSecond > 0 || rr.TerminatedWatchersPerSecond > 0)
}

func metricsNameFor(id metrics.MetricID) string {
	if m, ok := metrics.CatalogMetric(id); ok {
		if names := m.Names(); len(names) > 0 {
			return names[0] + ":"
		}
	}
	return string(id) + ":"
}
