package metrics

import (
	"math"
	"strings"
	"time"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// jsonNum maps the model's NaN (absent) and infinities to null.
func jsonNum(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// Document is the report in its JSON and YAML form: absent values (NaN)
// become null.
func (r Report) Document() api.WatchMetrics {
	doc := api.WatchMetrics{APIVersion: api.GroupVersion, Kind: api.KindWatchMetrics, APIServers: []api.APIServerMetrics{}}
	for _, a := range r.APIServers {
		doc.APIServers = append(doc.APIServers, serverDocument(a))
	}
	return doc
}

func serverDocument(a APIServer) api.APIServerMetrics {
	d := api.APIServerMetrics{Name: a.Name}
	snap := a.Current()
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
	d.CapturedAt = rfc3339(snap.CapturedAt)
	v := snap.Version
	d.Version = &api.MetricsVersion{Release: v.Release.String(), GitVersion: v.GitVersion, From: v.From, Evidence: v.Evidence}
	if !v.Min.IsZero() {
		d.Version.Min = v.Min.String()
	}
	if !v.Max.IsZero() {
		d.Version.Max = v.Max.String()
	}
	d.Goroutines, d.ResidentMemoryBytes = jsonNum(snap.Goroutines), jsonNum(snap.ResidentMemoryBytes)
	d.ProcessStartTime = rfc3339(UnixTime(snap.ProcessStartTime))

	rates := map[string]ResourceRate{}
	if a.Rates != nil {
		d.Sampling = &api.MetricsSampling{
			FirstCapturedAt: rfc3339(a.Rates.First.CapturedAt),
			IntervalSeconds: a.Rates.Interval.Seconds(),
			Restarted:       a.Rates.Restarted,
		}
		for _, rr := range a.Rates.Resources {
			rates[rr.Current.Key()] = rr
		}
	}
	d.Resources = []api.ResourceMetrics{}
	for _, res := range snap.Resources {
		rm := api.ResourceMetrics{
			Group: res.Group, Resource: res.Resource, Kind: res.Kind,
			Watchers: jsonNum(res.Watchers), InitEvents: jsonNum(res.InitEvents),
			TerminatedWatchers: jsonNum(res.TerminatedWatchers), EventsDispatched: jsonNum(res.EventsDispatched),
			CacheCapacity: jsonNum(res.CacheCapacity), RegisteredWatchers: jsonNum(res.RegisteredWatchers),
			EventsReceived: jsonNum(res.EventsReceived), CacheInitializations: jsonNum(res.CacheInitializations),
			CacheResourceVersion: jsonNum(res.CacheResourceVersion), WatchEvents: jsonNum(res.WatchEvents),
			WatchEventBytes: jsonNum(res.WatchEventBytes), WatchLists: jsonNum(res.WatchLists),
			WatchListSeconds: jsonNum(res.WatchListSeconds),
		}
		if a.Rates != nil {
			rr, ok := rates[res.Key()]
			if !ok {
				rr = UnknownRates()
			}
			rm.ResourceRates = &api.ResourceRates{
				WatchersChange:                jsonNum(rr.WatchersChange),
				InitEventsPerSecond:           jsonNum(rr.InitEventsPerSecond),
				TerminatedWatchersPerSecond:   jsonNum(rr.TerminatedWatchersPerSecond),
				EventsDispatchedPerSecond:     jsonNum(rr.EventsDispatchedPerSecond),
				EventsReceivedPerSecond:       jsonNum(rr.EventsReceivedPerSecond),
				CacheInitializationsPerSecond: jsonNum(rr.CacheInitializationsPerSecond),
				WatchEventsPerSecond:          jsonNum(rr.WatchEventsPerSecond),
				WatchEventBytesPerSecond:      jsonNum(rr.WatchEventBytesPerSecond),
				WatchListsPerSecond:           jsonNum(rr.WatchListsPerSecond),
			}
		}
		d.Resources = append(d.Resources, rm)
	}
	d.PriorityLevels = []api.PriorityLevelMetrics{}
	for _, pl := range snap.PriorityLevels {
		pd := api.PriorityLevelMetrics{Name: pl.Name, ExecutingSeats: jsonNum(pl.ExecutingSeats), LimitSeats: jsonNum(pl.LimitSeats), ExecutingRequests: jsonNum(pl.ExecutingRequests)}
		for _, fs := range pl.FlowSchemas {
			pd.FlowSchemas = append(pd.FlowSchemas, api.MetricsFlowSchema{Name: fs.Name, ExecutingSeats: jsonNum(fs.ExecutingSeats), ExecutingRequests: jsonNum(fs.ExecutingRequests)})
		}
		d.PriorityLevels = append(d.PriorityLevels, pd)
	}
	d.Missing = []api.MissingMetric{}
	for _, m := range snap.Missing {
		d.Missing = append(d.Missing, api.MissingMetric{Name: strings.Join(m.Names, ","), Metric: string(m.Metric), Reason: m.Reason, ReadAsZero: m.ReadAsZero})
	}
	for _, u := range snap.Unknown {
		d.Unknown = append(d.Unknown, api.UnknownMetric{Name: u.Name, Labels: u.Labels, Reason: u.Reason})
	}
	for _, b := range snap.BlindSpots {
		d.BlindSpots = append(d.BlindSpots, api.MetricsBlindSpot{Metric: string(b.Metric), Text: b.Text, Source: b.Source})
	}
	d.Notes = append(d.Notes, snap.Notes...)
	if a.Rates != nil {
		d.Notes = append(d.Notes, a.Rates.Notes...)
	}
	return d
}

// rfc3339 prints t as RFC 3339 UTC, "" when zero.
func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
