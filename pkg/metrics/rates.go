package metrics

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"time"
)

// RateSnapshot compares two snapshots of the same API server.
type RateSnapshot struct {
	First, Second *Snapshot
	// Interval is the time between the samples; rates divide by it, or by
	// the time since the restart when the server restarted in between.
	Interval time.Duration
	// Restarted is true when process_start_time_seconds changed: every
	// counter started again from 0.
	Restarted bool
	// Resources are the second snapshot's rows with rates, in its order.
	Resources []ResourceRate
	// Notes say which counters reset and what the rates are based on.
	Notes []string
}

// ResourceRate is a resource row of the second snapshot with per-second
// rates of its counters over the interval. A rate is NaN when the second
// snapshot lacks the counter; it is never negative.
type ResourceRate struct {
	// Current is the row as of the second snapshot (totals and gauges).
	Current Resource
	// WatchersChange is the change of the Watchers gauge.
	WatchersChange float64

	InitEventsPerSecond           float64
	TerminatedWatchersPerSecond   float64
	EventsReceivedPerSecond       float64
	EventsDispatchedPerSecond     float64
	CacheInitializationsPerSecond float64
	WatchEventsPerSecond          float64
	WatchEventBytesPerSecond      float64
	WatchListsPerSecond           float64
}

// ErrNoInterval is returned by Rates when neither an interval nor the two
// capture times say how far apart the samples are.
var ErrNoInterval = errors.New("no interval between the samples")

// Rates computes per-second rates between two snapshots of one API server.
// interval is the time between the samples; when it is 0, the snapshots'
// CapturedAt times are used.
//
// Counter resets are handled as Prometheus' rate() does: a counter that went
// down restarted from 0, so its increase is its new value. When
// process_start_time_seconds changed, the process restarted and every
// counter's increase is its new value, over the time since the restart when
// that is shorter than the interval. No rate is negative.
func Rates(first, second *Snapshot, interval time.Duration) (*RateSnapshot, error) {
	if first == nil || second == nil {
		return nil, errors.New("rates need two snapshots")
	}
	if interval <= 0 && !first.CapturedAt.IsZero() && !second.CapturedAt.IsZero() {
		interval = second.CapturedAt.Sub(first.CapturedAt)
	}
	if interval <= 0 {
		return nil, fmt.Errorf("rates between %q and %q: %w: give a positive interval or set both capture times", first.Source, second.Source, ErrNoInterval)
	}
	rs := &RateSnapshot{First: first, Second: second, Interval: interval}
	seconds := interval.Seconds()

	s1, s2 := first.ProcessStartTime, second.ProcessStartTime
	if !Absent(s1) && !Absent(s2) && math.Abs(s2-s1) >= 1 {
		rs.Restarted = true
		note := fmt.Sprintf("the API server restarted between the samples (process_start_time_seconds %s -> %s): counters restarted from 0, rates count from the restart",
			unixString(s1), unixString(s2))
		if !second.CapturedAt.IsZero() {
			since := float64(second.CapturedAt.UnixNano())/1e9 - s2
			if since > 0 && since < seconds {
				seconds = since
				note += fmt.Sprintf(" (%.0fs before the second sample)", since)
			}
		}
		rs.Notes = append(rs.Notes, note)
	}

	prev := map[string]Resource{}
	for _, r := range first.Resources {
		prev[r.Key()] = r
	}
	resets := map[string]int{}
	for _, r := range second.Resources {
		p, ok := prev[r.Key()]
		if !ok {
			p = Resource{}
			setNaN(&p)
		}
		rate := func(name string, a, b float64) float64 {
			inc, reset := increase(a, b, rs.Restarted)
			if reset {
				resets[name]++
			}
			if Absent(inc) {
				return nan
			}
			return inc / seconds
		}
		rr := ResourceRate{
			Current:                       r,
			WatchersChange:                r.Watchers - p.Watchers,
			InitEventsPerSecond:           rate("apiserver_init_events_total", p.InitEvents, r.InitEvents),
			TerminatedWatchersPerSecond:   rate("apiserver_terminated_watchers_total", p.TerminatedWatchers, r.TerminatedWatchers),
			EventsReceivedPerSecond:       rate("apiserver_watch_cache_events_received_total", p.EventsReceived, r.EventsReceived),
			EventsDispatchedPerSecond:     rate("apiserver_watch_cache_events_dispatched_total", p.EventsDispatched, r.EventsDispatched),
			CacheInitializationsPerSecond: rate("apiserver_watch_cache_initializations_total", p.CacheInitializations, r.CacheInitializations),
			WatchEventsPerSecond:          rate("apiserver_watch_events_total", p.WatchEvents, r.WatchEvents),
			WatchEventBytesPerSecond:      rate("apiserver_watch_events_sizes", p.WatchEventBytes, r.WatchEventBytes),
			WatchListsPerSecond:           rate("apiserver_watch_list_duration_seconds", p.WatchLists, r.WatchLists),
		}
		if rs.Restarted || Absent(p.Watchers) {
			rr.WatchersChange = nan
		}
		rs.Resources = append(rs.Resources, rr)
	}
	for _, name := range sortedNames(resets) {
		rs.Notes = append(rs.Notes, fmt.Sprintf("%s went down for %d resources with no restart of the server: not measured, because a counter of one process never goes down", name, resets[name]))
	}
	gone := 0
	seen := map[string]bool{}
	for _, r := range second.Resources {
		seen[r.Key()] = true
	}
	for _, r := range first.Resources {
		if !seen[r.Key()] {
			gone++
		}
	}
	if gone > 0 {
		rs.Notes = append(rs.Notes, fmt.Sprintf("%d resources of the first sample are not in the second", gone))
	}
	return rs, nil
}

// increase returns how much a counter grew from a to b. Any counter after
// a restart counts from 0; one that went down without a restart is not
// measured (NaN, reset set). An absent a means the
// series did not exist yet: it starts at 0.
func increase(a, b float64, restarted bool) (inc float64, reset bool) {
	switch {
	case Absent(b) || math.IsInf(b, 0):
		return nan, false
	case restarted, Absent(a):
		return math.Max(b, 0), false
	case b < a:
		// Without a restart a counter cannot go down: the readings
		// contradict each other, so the increase is not measured.
		return nan, true
	}
	return b - a, false
}

func unixString(s float64) string {
	sec, frac := math.Modf(s)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC().Format(time.RFC3339)
}

func sortedNames(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
