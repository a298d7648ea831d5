package metrics

import (
	"fmt"
	"math"
	"sort"

	dto "github.com/prometheus/client_model/go"
)

// Helpers that read one series of a Prometheus family: its value, its
// labels, and which variant of a catalog metric it is.

// seriesVal is the value of one series: v for counters and gauges, sum and
// count for histograms.
type seriesVal struct{ v, sum, count float64 }

// unusable says why a value read from outside is not measured: NaN, an
// infinity or a negative number, none of which a count, a size or a
// duration of the watch model can be; "" when it is usable.
func (v seriesVal) unusable() string {
	for _, f := range []float64{v.v, v.sum, v.count} {
		if why := unusable(f); why != "" {
			return why
		}
	}
	return ""
}

// unusable says why f is not a measurement, "" when it is one.
func unusable(f float64) string {
	switch {
	case math.IsNaN(f):
		return "value NaN: not measured"
	case math.IsInf(f, 0):
		return fmt.Sprintf("value %v: not measured", f)
	case f < 0:
		return fmt.Sprintf("value %g is negative: not measured", f)
	}
	return ""
}

func typeFits(got dto.MetricType, want string) bool {
	switch want {
	case "counter":
		return got == dto.MetricType_COUNTER || got == dto.MetricType_UNTYPED
	case "gauge":
		return got == dto.MetricType_GAUGE || got == dto.MetricType_UNTYPED
	case "histogram":
		return got == dto.MetricType_HISTOGRAM || got == dto.MetricType_GAUGE_HISTOGRAM
	}
	return false
}

func seriesValue(m *dto.Metric, want string) (seriesVal, bool) {
	switch {
	case m.GetCounter() != nil:
		return seriesVal{v: m.GetCounter().GetValue()}, true
	case m.GetGauge() != nil:
		return seriesVal{v: m.GetGauge().GetValue()}, true
	case m.GetUntyped() != nil:
		return seriesVal{v: m.GetUntyped().GetValue()}, true
	case m.GetHistogram() != nil:
		h := m.GetHistogram()
		count := float64(h.GetSampleCount())
		if h.SampleCountFloat != nil {
			count = h.GetSampleCountFloat()
		}
		return seriesVal{v: count, sum: h.GetSampleSum(), count: count}, true
	}
	return seriesVal{}, false
}

// labelNames returns the series' label names, sorted, without the
// histogram/summary bucket labels.
func labelNames(m *dto.Metric) []string {
	out := make([]string, 0, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		if n := l.GetName(); n != "le" && n != "quantile" {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func matchVariant(vs []Variant, names []string) (Variant, bool) {
	for _, v := range vs {
		if sameSet(v.Labels, names) {
			return v, true
		}
	}
	return Variant{}, false
}

func sameSet(a, sortedB []string) bool {
	if len(a) != len(sortedB) {
		return false
	}
	s := append([]string(nil), a...)
	sort.Strings(s)
	for i := range s {
		if s[i] != sortedB[i] {
			return false
		}
	}
	return true
}

// sniffScheme reads an unexpected label set as best it can: extra labels
// are tolerated when the ones the scheme needs are there.
func sniffScheme(want Scheme, names []string) (Scheme, bool) {
	has := map[string]bool{}
	for _, n := range names {
		has[n] = true
	}
	switch want {
	case ByNothing:
		return ByNothing, len(names) == 0
	case ByPriorityLevel:
		return ByPriorityLevel, has["priority_level"]
	case ByRequest:
		return ByRequest, has["verb"] && has["resource"]
	}
	switch {
	case has["group"] && has["resource"]:
		return ByGroupResource, true
	case has["resource"] && !has["group"]:
		return ByResourceString, true
	case has["kind"]:
		return ByGroupVersionKind, true
	}
	return want, false
}

// addNaN adds b to a, where an absent (NaN) a counts as 0.
func addNaN(a, b float64) float64 {
	if Absent(a) {
		return b
	}
	return a + b
}
