package metrics

import (
	"fmt"
	"math"
	"time"
)

// Absent reports whether a value of the watch model is absent: the model
// stores absent values as NaN (never as 0), so a metric the server did not
// expose cannot pass for a zero. Renderers print NaN as "-" (table) or null
// (JSON, YAML).
func Absent(v float64) bool { return math.IsNaN(v) }

var nan = math.NaN()

// Snapshot is the watch model of one sample of one API server. It is a
// plain value: Extract builds it and nothing changes it afterwards, so it
// may be read from several goroutines.
//
// Every float64 in it is NaN when the metric is absent or does not apply
// (see Absent). A counter that the release defines but that has no series
// yet (a counter vector shows nothing until first incremented) is read as 0
// for the resources it covers, and listed in Missing with that reason.
type Snapshot struct {
	Source     string
	CapturedAt time.Time
	Version    VersionInfo

	Goroutines          float64
	ResidentMemoryBytes float64
	// ProcessStartTime is in seconds since the Unix epoch.
	ProcessStartTime float64

	// Resources are sorted by group, then resource; rows known only by a
	// kind (before 1.34, see Resource.Kind) come last.
	Resources []Resource
	// PriorityLevels are sorted by name.
	PriorityLevels []PriorityLevel

	// Missing lists catalog metrics without any series, and why.
	Missing []Missing
	// Unknown lists watch families or label sets the catalog does not know.
	Unknown []Unknown
	// BlindSpots say what the columns cannot show, with the upstream source.
	BlindSpots []BlindSpot
	// Notes carry everything else worth saying: skipped input, version
	// detection, kinds that could not be matched to a resource.
	Notes []string
}

// Resource is the watch state of one API resource.
type Resource struct {
	Group    string
	Resource string
	// Kind is set only on rows built from a kind-labelled metric (releases
	// before 1.34) that could not be matched to a resource.
	Kind string

	// Watchers is the number of WATCH requests being served
	// (apiserver_longrunning_requests{verb="WATCH"}, summed over version,
	// scope, subresource and component).
	Watchers float64
	// RegisteredWatchers is apiserver_registered_watchers (1.24 and older).
	RegisteredWatchers float64
	// InitEvents, TerminatedWatchers, EventsReceived, EventsDispatched and
	// CacheInitializations are watch cache counters (NaN for resources not
	// served from the watch cache).
	InitEvents           float64
	TerminatedWatchers   float64
	EventsReceived       float64
	EventsDispatched     float64
	CacheInitializations float64
	// CacheCapacity and CacheResourceVersion are watch cache gauges.
	CacheCapacity        float64
	CacheResourceVersion float64
	// WatchEvents and WatchEventBytes count what watch handlers wrote to
	// clients (summed over API versions).
	WatchEvents     float64
	WatchEventBytes float64
	// WatchLists and WatchListSeconds are the count and total duration of
	// completed watch-list requests.
	WatchLists       float64
	WatchListSeconds float64
}

// Key identifies the row: group/resource, or group/Kind=kind.
func (r Resource) Key() string {
	if r.Resource == "" && r.Kind != "" {
		return r.Group + "/Kind=" + r.Kind
	}
	return r.Group + "/" + r.Resource
}

// Name formats the row as kubectl does: "pods", "deployments.apps", or
// "Kind=Deployment.apps" for a kind-only row.
func (r Resource) Name() string {
	n := r.Resource
	if n == "" {
		n = "Kind=" + r.Kind
	}
	if r.Group != "" {
		n += "." + r.Group
	}
	return n
}

// Cached reports whether any watch cache metric has a series for the row.
func (r Resource) Cached() bool {
	for _, v := range []float64{r.InitEvents, r.TerminatedWatchers, r.EventsReceived, r.EventsDispatched, r.CacheInitializations, r.CacheCapacity, r.CacheResourceVersion} {
		if !Absent(v) {
			return true
		}
	}
	return false
}

// PriorityLevel is the APF state of one priority level.
type PriorityLevel struct {
	Name string
	// ExecutingSeats and ExecutingRequests are summed over flow schemas.
	// A WATCH counts only while in its initial phase, which is where a stuck
	// watch stays.
	ExecutingSeats    float64
	LimitSeats        float64
	ExecutingRequests float64
	// FlowSchemas break the executing figures down, sorted by name.
	FlowSchemas []FlowSchemaLoad
}

// FlowSchemaLoad is the executing load of one flow schema in a priority level.
type FlowSchemaLoad struct {
	Name              string
	ExecutingSeats    float64
	ExecutingRequests float64
}

// Missing is a catalog metric with no series in the sample.
type Missing struct {
	Metric MetricID
	// Names are the family names looked for.
	Names  []string
	Reason string
	// ReadAsZero is true when the values were taken as 0 (a defined counter
	// with no series yet).
	ReadAsZero bool
}

// Unknown is a family, or a label set of a known family, that the catalog
// does not describe. Its values were not used unless Reason says otherwise.
type Unknown struct {
	Name   string
	Labels []string
	Reason string
}

// BlindSpot says what a column cannot show.
type BlindSpot struct {
	Metric MetricID
	Text   string
	// Source is the upstream file:line the statement rests on.
	Source string
}

// VersionInfo says which release's mapping was used and why.
type VersionInfo struct {
	// Release is the release whose names and labels were expected.
	Release Release
	// GitVersion is kubernetes_build_info's git_version, when exposed.
	GitVersion string
	// From is how Release was found: "given", "kubernetes_build_info",
	// "metric names and labels" or "assumed".
	From string
	// Min and Max bound the releases consistent with the metric names and
	// labels (zero: unbounded).
	Min, Max Release
	// Evidence lists what narrowed Min and Max.
	Evidence []string
}

func (v VersionInfo) String() string {
	switch v.From {
	case "kubernetes_build_info":
		return fmt.Sprintf("%s (kubernetes_build_info %s)", v.Release, v.GitVersion)
	case "given":
		return fmt.Sprintf("%s (given)", v.Release)
	case "assumed":
		return fmt.Sprintf("%s (assumed: no version evidence)", v.Release)
	}
	var span string
	switch {
	case v.Min == v.Max:
		span = v.Min.String()
	case v.Max.IsZero():
		span = v.Min.String() + " or newer"
	case v.Min.IsZero():
		span = v.Max.String() + " or older"
	default:
		span = v.Min.String() + " to " + v.Max.String()
	}
	if v.Min == v.Max {
		return fmt.Sprintf("%s (%s)", span, v.From)
	}
	return fmt.Sprintf("%s (%s; %s names expected)", span, v.From, v.Release)
}
