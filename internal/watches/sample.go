package watches

import (
	"time"

	"github.com/watch-doctor/watch-doctor/pkg/apf"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/metrics"
)

// Sample is what was captured of one API server at one time. Any part may
// be missing.
type Sample struct {
	// Source names where the sample came from (a directory, a URL), for
	// messages.
	Source string
	// CapturedAt is when the goroutine dump was taken; zero when unknown.
	CapturedAt time.Time
	// MetricsAt is when /metrics was read, on the server's clock when
	// known; zero when unknown (then CapturedAt less the capture slack
	// stands for it).
	MetricsAt time.Time
	Dump      *Dump
	Requests  *apf.Requests
	Levels    []apf.PriorityLevel
	Metrics   *MetricsContext
	// Mixed says why the sample's dumps may come from different
	// processes (read through a load balancer): clients are then matched
	// as ambiguous at best.
	Mixed string
	// Withheld says why no debug=2 dump was taken and what it would have
	// cost ("a dump would stop this server for about 1.2 s"); empty when
	// none was withheld.
	Withheld string
}

// MetricsContext is what the diagnosis uses of /metrics.
type MetricsContext struct {
	Goroutines          *float64
	ResidentMemoryBytes *float64
	ProcessStartTime    *float64
	// Levels maps a priority level to its executing seats and seat limit.
	Levels             map[string]LevelSeats
	WatchersByResource []api.ResourceCount
	// WatchRequests is apiserver_longrunning_requests{verb="WATCH"} per
	// "group/resource" and scope (metrics.WatchRequests); nil when absent.
	WatchRequests map[string]map[string]float64
	// EventSizes is apiserver_watch_events_sizes per "group/resource"
	// (metrics.EventSizeBuckets); nil when absent.
	EventSizes map[string][]metrics.SizeBucket
	// WatchEvents is apiserver_watch_events_total per "group/resource";
	// nil when absent. Its growth between two samples says whether any
	// handler of a resource wrote an event (the trace route's elimination).
	WatchEvents map[string]float64
}

// LevelSeats is one priority level's seat use from metrics.
type LevelSeats struct {
	Executing *float64
	Limit     *float64
}

// Server is one API server instance and its samples, oldest first.
type Server struct {
	Name    string
	Version string
	Samples []Sample
	Notes   []string
	// Trace is the server's execution trace, taken between its first and
	// last samples (ReadTrace); nil when none was taken.
	Trace *Trace
}
