package metrics

import (
	"math"
	"time"
)

// Report is what the metrics command shows: the watch health of every API
// server it read. One server that could not be read does not hide the
// others: its entry carries Err.
type Report struct {
	APIServers []APIServer
}

// APIServer is one API server's entry in a Report.
type APIServer struct {
	// Name identifies the server (its address, pod name or file).
	Name string
	// Snapshot is the (last) sample; nil when Err is set.
	Snapshot *Snapshot
	// Rates is set when two samples were taken.
	Rates *RateSnapshot
	// Err is why this server has no snapshot.
	Err error
}

// Current is the snapshot the entry shows: the second one when there are
// rates; nil when Err is set.
func (a APIServer) Current() *Snapshot {
	if a.Rates != nil && a.Rates.Second != nil {
		return a.Rates.Second
	}
	return a.Snapshot
}

// UnknownRates is a rate of a resource absent from the first sample: every
// rate unknown (NaN).
func UnknownRates() ResourceRate {
	n := math.NaN()
	return ResourceRate{WatchersChange: n, InitEventsPerSecond: n, TerminatedWatchersPerSecond: n,
		EventsDispatchedPerSecond: n, EventsReceivedPerSecond: n, CacheInitializationsPerSecond: n,
		WatchEventsPerSecond: n, WatchEventBytesPerSecond: n, WatchListsPerSecond: n}
}

// UnixTime is a process_start_time_seconds value as a time; zero when the
// value is absent or not a plausible time.
func UnixTime(v float64) time.Time {
	if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 || v > 1e11 {
		return time.Time{}
	}
	sec, frac := math.Modf(v)
	return time.Unix(int64(sec), int64(frac*1e9))
}
