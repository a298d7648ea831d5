package metrics

import (
	"math"
	"sort"

	dto "github.com/prometheus/client_model/go"
)

// What client attribution cross-checks against (internal/watches): how many
// WATCH requests of each group/resource are being served, per scope, and
// the sizes of the watch events of each group/resource written so far.

// Scopes of apiserver_longrunning_requests, as CleanScope names them
// (k8s.io/apiserver v0.37.2 pkg/endpoints/metrics/metrics.go:662): a
// single object (a name, also from a metadata.name field selector), one
// namespace, or the whole cluster.
const (
	ScopeResource  = "resource"
	ScopeNamespace = "namespace"
	ScopeCluster   = "cluster"
)

// SizeBucket is one cumulative bucket of a histogram: Count observations
// of at most UpperBound (+Inf for the last).
type SizeBucket struct {
	UpperBound float64
	Count      float64
}

// WatchRequests returns apiserver_longrunning_requests{verb="WATCH"} per
// "group/resource" and scope, summed over version, subresource and
// component (RecordLongRunning, metrics.go:539, counts each watch
// handler from its start to its end). nil when the sample has no such
// series.
func WatchRequests(s *Sample) map[string]map[string]float64 {
	fam := s.Family("apiserver_longrunning_requests")
	if fam == nil {
		return nil
	}
	var out map[string]map[string]float64
	for _, m := range fam.GetMetric() {
		if labelValue(m, "verb") != "WATCH" || labelValue(m, "resource") == "" {
			continue
		}
		v, ok := seriesValue(m, "gauge")
		if !ok || math.IsNaN(v.v) {
			continue
		}
		if out == nil {
			out = map[string]map[string]float64{}
		}
		k := labelValue(m, "group") + "/" + labelValue(m, "resource")
		if out[k] == nil {
			out[k] = map[string]float64{}
		}
		out[k][labelValue(m, "scope")] += v.v
	}
	return out
}

// EventSizeBuckets returns the cumulative buckets of
// apiserver_watch_events_sizes per "group/resource", summed over versions
// and sorted by bound. An event is observed once the handler wrote it in
// full (watchEventMetricsRecorder.RecordEvent, called at watch.go:450, observes at watch.go:240). nil when
// the sample has no such histogram.
func EventSizeBuckets(s *Sample) map[string][]SizeBucket {
	fam := s.Family("apiserver_watch_events_sizes")
	if fam == nil {
		return nil
	}
	sums := map[string]map[float64]float64{}
	for _, m := range fam.GetMetric() {
		h := m.GetHistogram()
		if h == nil || labelValue(m, "resource") == "" {
			continue
		}
		k := labelValue(m, "group") + "/" + labelValue(m, "resource")
		if sums[k] == nil {
			sums[k] = map[float64]float64{}
		}
		inf := false
		for _, b := range h.GetBucket() {
			sums[k][b.GetUpperBound()] += cumulative(b)
			inf = inf || math.IsInf(b.GetUpperBound(), 1)
		}
		if !inf {
			sums[k][math.Inf(1)] += float64(h.GetSampleCount())
		}
	}
	if len(sums) == 0 {
		return nil
	}
	out := make(map[string][]SizeBucket, len(sums))
	for k, bs := range sums {
		l := make([]SizeBucket, 0, len(bs))
		for ub, c := range bs {
			l = append(l, SizeBucket{UpperBound: ub, Count: c})
		}
		sort.Slice(l, func(i, j int) bool { return l[i].UpperBound < l[j].UpperBound })
		out[k] = l
	}
	return out
}

func cumulative(b *dto.Bucket) float64 {
	if b.CumulativeCountFloat != nil {
		return b.GetCumulativeCountFloat()
	}
	return float64(b.GetCumulativeCount())
}
