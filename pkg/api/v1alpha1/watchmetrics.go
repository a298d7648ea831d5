package v1alpha1

// KindWatchMetrics is the kind of a metrics report.
const KindWatchMetrics = "WatchMetrics"

// WatchMetrics is the JSON/YAML form of a metrics report. Field names are
// part of the output contract. Absent values are null, never 0.
type WatchMetrics struct {
	APIVersion string             `json:"apiVersion"`
	Kind       string             `json:"kind"`
	APIServers []APIServerMetrics `json:"apiservers"`
}

// APIServerMetrics is one API server in WatchMetrics.
type APIServerMetrics struct {
	Name  string `json:"name"`
	Error string `json:"error,omitempty"`

	Source     string           `json:"source,omitempty"`
	CapturedAt string           `json:"capturedAt,omitempty"`
	Version    *MetricsVersion  `json:"version,omitempty"`
	Sampling   *MetricsSampling `json:"sampling,omitempty"`

	Goroutines          *float64 `json:"goroutines"`
	ResidentMemoryBytes *float64 `json:"residentMemoryBytes"`
	// ProcessStartTime is RFC 3339, UTC.
	ProcessStartTime string `json:"processStartTime,omitempty"`

	Resources      []ResourceMetrics      `json:"resources"`
	PriorityLevels []PriorityLevelMetrics `json:"priorityLevels"`
	Missing        []MissingMetric        `json:"missing"`
	Unknown        []UnknownMetric        `json:"unknown,omitempty"`
	BlindSpots     []MetricsBlindSpot     `json:"blindSpots,omitempty"`
	Notes          []string               `json:"notes,omitempty"`
}

// MetricsVersion says which release's metric names were expected, and why.
type MetricsVersion struct {
	Release    string   `json:"release"`
	GitVersion string   `json:"gitVersion,omitempty"`
	From       string   `json:"from"`
	Min        string   `json:"min,omitempty"`
	Max        string   `json:"max,omitempty"`
	Evidence   []string `json:"evidence,omitempty"`
}

// MetricsSampling is present when rates were computed from two samples.
type MetricsSampling struct {
	FirstCapturedAt string  `json:"firstCapturedAt,omitempty"`
	IntervalSeconds float64 `json:"intervalSeconds"`
	Restarted       bool    `json:"restarted"`
}

// ResourceMetrics is one resource. The counters are totals since the
// process started; with two samples the ...PerSecond fields are added.
type ResourceMetrics struct {
	Group    string `json:"group"`
	Resource string `json:"resource"`
	Kind     string `json:"kind,omitempty"`

	Watchers           *float64 `json:"watchers"`
	InitEvents         *float64 `json:"initEvents"`
	TerminatedWatchers *float64 `json:"terminatedWatchers"`
	EventsDispatched   *float64 `json:"eventsDispatched"`
	CacheCapacity      *float64 `json:"cacheCapacity"`

	RegisteredWatchers   *float64 `json:"registeredWatchers,omitempty"`
	EventsReceived       *float64 `json:"eventsReceived"`
	CacheInitializations *float64 `json:"cacheInitializations"`
	CacheResourceVersion *float64 `json:"cacheResourceVersion"`
	WatchEvents          *float64 `json:"watchEvents"`
	WatchEventBytes      *float64 `json:"watchEventBytes"`
	WatchLists           *float64 `json:"watchLists"`
	WatchListSeconds     *float64 `json:"watchListSeconds"`

	*ResourceRates
}

// ResourceRates are the per-second rates over the sampling interval.
type ResourceRates struct {
	WatchersChange                *float64 `json:"watchersChange"`
	InitEventsPerSecond           *float64 `json:"initEventsPerSecond"`
	TerminatedWatchersPerSecond   *float64 `json:"terminatedWatchersPerSecond"`
	EventsDispatchedPerSecond     *float64 `json:"eventsDispatchedPerSecond"`
	EventsReceivedPerSecond       *float64 `json:"eventsReceivedPerSecond"`
	CacheInitializationsPerSecond *float64 `json:"cacheInitializationsPerSecond"`
	WatchEventsPerSecond          *float64 `json:"watchEventsPerSecond"`
	WatchEventBytesPerSecond      *float64 `json:"watchEventBytesPerSecond"`
	WatchListsPerSecond           *float64 `json:"watchListsPerSecond"`
}

// PriorityLevelMetrics is one APF priority level.
type PriorityLevelMetrics struct {
	Name              string              `json:"name"`
	ExecutingSeats    *float64            `json:"executingSeats"`
	LimitSeats        *float64            `json:"limitSeats"`
	ExecutingRequests *float64            `json:"executingRequests"`
	FlowSchemas       []MetricsFlowSchema `json:"flowSchemas,omitempty"`
}

// MetricsFlowSchema is the executing load of one flow schema.
type MetricsFlowSchema struct {
	Name              string   `json:"name"`
	ExecutingSeats    *float64 `json:"executingSeats"`
	ExecutingRequests *float64 `json:"executingRequests"`
}

// MissingMetric is a metric with no series, and why.
type MissingMetric struct {
	Name       string `json:"name"`
	Metric     string `json:"metric"`
	Reason     string `json:"reason"`
	ReadAsZero bool   `json:"readAsZero"`
}

// UnknownMetric is a family or label set the mapping does not know.
type UnknownMetric struct {
	Name   string   `json:"name"`
	Labels []string `json:"labels,omitempty"`
	Reason string   `json:"reason"`
}

// MetricsBlindSpot says what a column cannot show.
type MetricsBlindSpot struct {
	Metric string `json:"metric"`
	Text   string `json:"text"`
	Source string `json:"source"`
}
