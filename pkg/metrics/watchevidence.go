package metrics

import (
	"math"
	"sort"
	"strings"

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

// TerminatedByReason returns apiserver_terminated_watchers_total per
// "group/resource" and reason: the watchers the cacher closed because an
// event could not be queued into their input buffer before the
// dispatcher's timer fired (k8s.io/apiserver v0.37.2
// pkg/storage/cacher/cache_watcher.go:190, in add's closeFunc at
// :180-231; the timer is the dispatch budget, cacher.go:1033-1060). It
// reads every shape the counter has had: a "group.resource" resource
// label before 1.34, group and resource labels since (v0.37.2
// pkg/storage/cacher/metrics/metrics.go:138-146, unchanged in
// v0.38.0-beta.0 at :160-168), and a reason label where a server adds
// one; without one the reason is "". Series that are not finite
// non-negative counts are left out (the catalog's extraction says so).
// nil when the sample has no such series.
func TerminatedByReason(s *Sample) map[string]map[string]float64 {
	fam := s.Family("apiserver_terminated_watchers_total")
	if fam == nil {
		return nil
	}
	var out map[string]map[string]float64
	for _, m := range fam.GetMetric() {
		res, group := labelValue(m, "resource"), labelValue(m, "group")
		if res == "" {
			continue
		}
		if !hasLabel(m, "group") {
			res, group, _ = strings.Cut(res, ".")
		}
		v, ok := seriesValue(m, "counter")
		if !ok || v.unusable() != "" {
			continue
		}
		if out == nil {
			out = map[string]map[string]float64{}
		}
		k := group + "/" + res
		if out[k] == nil {
			out[k] = map[string]float64{}
		}
		out[k][labelValue(m, "reason")] += v.v
	}
	return out
}

func hasLabel(m *dto.Metric, name string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return true
		}
	}
	return false
}
