package report

import (
	"math"
	"strings"

	"github.com/watch-doctor/watch-doctor/pkg/metrics"
)

// WatchMetricsDoc is the JSON/YAML form of a metrics report. Field names are
// part of the output contract. Absent values are null, never 0.
type WatchMetricsDoc struct {
	APIVersion string             `json:"apiVersion"`
	Kind       string             `json:"kind"`
	APIServers []APIServerMetrics `json:"apiservers"`
}

// APIServerMetrics is one API server in WatchMetricsDoc.
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

// jsonNum maps the model's NaN (absent) and infinities to null.
func metricsJSONNum(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func metricsDocument(r metrics.Report) WatchMetricsDoc {
	doc := WatchMetricsDoc{APIVersion: MetricsAPIVersion, Kind: MetricsKind, APIServers: []APIServerMetrics{}}
	for _, a := range r.APIServers {
		doc.APIServers = append(doc.APIServers, metricsServerDoc(a))
	}
	return doc
}

func metricsServerDoc(a metrics.APIServer) APIServerMetrics {
	d := APIServerMetrics{Name: a.Name}
	snap := metricsSnapshot(a)
	if a.Err != nil {
		d.Error = a.Err.Error()
	}
	if snap == nil {
		if d.Error == "" {
			d.Error = "no sample"
		}
		return d
	}
	d.Source = snap.Source
	d.CapturedAt = timestamp(snap.CapturedAt)
	v := snap.Version
	d.Version = &MetricsVersion{Release: v.Release.String(), GitVersion: v.GitVersion, From: v.From, Evidence: v.Evidence}
	if !v.Min.IsZero() {
		d.Version.Min = v.Min.String()
	}
	if !v.Max.IsZero() {
		d.Version.Max = v.Max.String()
	}
	d.Goroutines, d.ResidentMemoryBytes = metricsJSONNum(snap.Goroutines), metricsJSONNum(snap.ResidentMemoryBytes)
	d.ProcessStartTime = unixTime(snap.ProcessStartTime)

	rates := map[string]metrics.ResourceRate{}
	if a.Rates != nil {
		d.Sampling = &MetricsSampling{
			FirstCapturedAt: timestamp(a.Rates.First.CapturedAt),
			IntervalSeconds: a.Rates.Interval.Seconds(),
			Restarted:       a.Rates.Restarted,
		}
		for _, rr := range a.Rates.Resources {
			rates[rr.Current.Key()] = rr
		}
	}
	d.Resources = []ResourceMetrics{}
	for _, res := range snap.Resources {
		rm := ResourceMetrics{
			Group: res.Group, Resource: res.Resource, Kind: res.Kind,
			Watchers: metricsJSONNum(res.Watchers), InitEvents: metricsJSONNum(res.InitEvents),
			TerminatedWatchers: metricsJSONNum(res.TerminatedWatchers), EventsDispatched: metricsJSONNum(res.EventsDispatched),
			CacheCapacity: metricsJSONNum(res.CacheCapacity), RegisteredWatchers: metricsJSONNum(res.RegisteredWatchers),
			EventsReceived: metricsJSONNum(res.EventsReceived), CacheInitializations: metricsJSONNum(res.CacheInitializations),
			CacheResourceVersion: metricsJSONNum(res.CacheResourceVersion), WatchEvents: metricsJSONNum(res.WatchEvents),
			WatchEventBytes: metricsJSONNum(res.WatchEventBytes), WatchLists: metricsJSONNum(res.WatchLists),
			WatchListSeconds: metricsJSONNum(res.WatchListSeconds),
		}
		if a.Rates != nil {
			rr, ok := rates[res.Key()]
			if !ok {
				rr = metricsNaNRates()
			}
			rm.ResourceRates = &ResourceRates{
				WatchersChange:                metricsJSONNum(rr.WatchersChange),
				InitEventsPerSecond:           metricsJSONNum(rr.InitEventsPerSecond),
				TerminatedWatchersPerSecond:   metricsJSONNum(rr.TerminatedWatchersPerSecond),
				EventsDispatchedPerSecond:     metricsJSONNum(rr.EventsDispatchedPerSecond),
				EventsReceivedPerSecond:       metricsJSONNum(rr.EventsReceivedPerSecond),
				CacheInitializationsPerSecond: metricsJSONNum(rr.CacheInitializationsPerSecond),
				WatchEventsPerSecond:          metricsJSONNum(rr.WatchEventsPerSecond),
				WatchEventBytesPerSecond:      metricsJSONNum(rr.WatchEventBytesPerSecond),
				WatchListsPerSecond:           metricsJSONNum(rr.WatchListsPerSecond),
			}
		}
		d.Resources = append(d.Resources, rm)
	}
	d.PriorityLevels = []PriorityLevelMetrics{}
	for _, pl := range snap.PriorityLevels {
		pd := PriorityLevelMetrics{Name: pl.Name, ExecutingSeats: metricsJSONNum(pl.ExecutingSeats), LimitSeats: metricsJSONNum(pl.LimitSeats), ExecutingRequests: metricsJSONNum(pl.ExecutingRequests)}
		for _, fs := range pl.FlowSchemas {
			pd.FlowSchemas = append(pd.FlowSchemas, MetricsFlowSchema{Name: fs.Name, ExecutingSeats: metricsJSONNum(fs.ExecutingSeats), ExecutingRequests: metricsJSONNum(fs.ExecutingRequests)})
		}
		d.PriorityLevels = append(d.PriorityLevels, pd)
	}
	d.Missing = []MissingMetric{}
	for _, m := range snap.Missing {
		d.Missing = append(d.Missing, MissingMetric{Name: strings.Join(m.Names, ","), Metric: string(m.Metric), Reason: m.Reason, ReadAsZero: m.ReadAsZero})
	}
	for _, u := range snap.Unknown {
		d.Unknown = append(d.Unknown, UnknownMetric{Name: u.Name, Labels: u.Labels, Reason: u.Reason})
	}
	for _, b := range snap.BlindSpots {
		d.BlindSpots = append(d.BlindSpots, MetricsBlindSpot{Metric: string(b.Metric), Text: b.Text, Source: b.Source})
	}
	d.Notes = append(d.Notes, snap.Notes...)
	if a.Rates != nil {
		d.Notes = append(d.Notes, a.Rates.Notes...)
	}
	return d
}

// currentSnapshot is the snapshot a server's entry shows: the second one
// when there are rates.
func metricsSnapshot(a metrics.APIServer) *metrics.Snapshot {
	if a.Rates != nil && a.Rates.Second != nil {
		return a.Rates.Second
	}
	return a.Snapshot
}

func metricsNaNRates() metrics.ResourceRate {
	n := math.NaN()
	return metrics.ResourceRate{WatchersChange: n, InitEventsPerSecond: n, TerminatedWatchersPerSecond: n,
		EventsDispatchedPerSecond: n, EventsReceivedPerSecond: n, CacheInitializationsPerSecond: n,
		WatchEventsPerSecond: n, WatchEventBytesPerSecond: n, WatchListsPerSecond: n}
}
