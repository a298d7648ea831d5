package metrics

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
)

func TestTypeFits(t *testing.T) {
	for _, tc := range []struct {
		got  dto.MetricType
		want string
		fits bool
	}{
		{dto.MetricType_COUNTER, "counter", true},
		{dto.MetricType_UNTYPED, "counter", true},
		{dto.MetricType_GAUGE, "counter", false},
		{dto.MetricType_GAUGE, "gauge", true},
		{dto.MetricType_UNTYPED, "gauge", true},
		{dto.MetricType_COUNTER, "gauge", false},
		{dto.MetricType_HISTOGRAM, "histogram", true},
		{dto.MetricType_GAUGE_HISTOGRAM, "histogram", true},
		{dto.MetricType_UNTYPED, "histogram", false},
		{dto.MetricType_SUMMARY, "summary", false},
	} {
		if got := typeFits(tc.got, tc.want); got != tc.fits {
			t.Errorf("typeFits(%s, %q) = %v, want %v", tc.got, tc.want, got, tc.fits)
		}
	}
}

func TestSeriesValue(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    *dto.Metric
		want seriesVal
		ok   bool
	}{
		{"counter", &dto.Metric{Counter: &dto.Counter{Value: ref(float64(3))}}, seriesVal{v: 3}, true},
		{"gauge", &dto.Metric{Gauge: &dto.Gauge{Value: ref(float64(-1))}}, seriesVal{v: -1}, true},
		{"untyped", &dto.Metric{Untyped: &dto.Untyped{Value: ref(float64(7))}}, seriesVal{v: 7}, true},
		{"histogram", &dto.Metric{Histogram: &dto.Histogram{SampleCount: ref(uint64(4)), SampleSum: ref(float64(2.5))}}, seriesVal{v: 4, sum: 2.5, count: 4}, true},
		{"float histogram", &dto.Metric{Histogram: &dto.Histogram{SampleCount: ref(uint64(4)), SampleCountFloat: ref(float64(4.5)), SampleSum: ref(float64(1))}}, seriesVal{v: 4.5, sum: 1, count: 4.5}, true},
		{"summary", &dto.Metric{Summary: &dto.Summary{SampleCount: ref(uint64(1))}}, seriesVal{}, false},
	} {
		got, ok := seriesValue(tc.m, "")
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: seriesValue = %+v, %v; want %+v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

func labelled(pairs ...string) *dto.Metric {
	m := &dto.Metric{}
	for i := 0; i < len(pairs); i += 2 {
		m.Label = append(m.Label, &dto.LabelPair{Name: ref(pairs[i]), Value: ref(pairs[i+1])})
	}
	return m
}

func TestLabels(t *testing.T) {
	m := labelled("resource", "pods", "le", "0.5", "group", "", "quantile", "0.9")
	if diff := cmp.Diff([]string{"group", "resource"}, labelNames(m)); diff != "" {
		t.Errorf("labelNames (-want +got):\n%s", diff)
	}
	if got := labelValue(m, "resource"); got != "pods" {
		t.Errorf("labelValue(resource) = %q", got)
	}
	if got := labelValue(m, "verb"); got != "" {
		t.Errorf("labelValue(verb) = %q, want none", got)
	}
	vs := []Variant{{Name: "a", Labels: []string{"resource"}}, {Name: "b", Labels: []string{"resource", "group"}}}
	if v, ok := matchVariant(vs, []string{"group", "resource"}); !ok || v.Name != "b" {
		t.Errorf("matchVariant = %+v, %v; want b, whatever the order of its labels", v, ok)
	}
	if _, ok := matchVariant(vs, []string{"group"}); ok {
		t.Error("matchVariant matched a label set no variant has")
	}
	if sameSet([]string{"a", "a"}, []string{"a", "b"}) {
		t.Error("sameSet([a a], [a b])")
	}
}

func TestSniffScheme(t *testing.T) {
	for _, tc := range []struct {
		want  Scheme
		names []string
		got   Scheme
		ok    bool
	}{
		{ByNothing, nil, ByNothing, true},
		{ByNothing, []string{"x"}, ByNothing, false},
		{ByPriorityLevel, []string{"flow_schema", "priority_level"}, ByPriorityLevel, true},
		{ByPriorityLevel, []string{"flow_schema"}, ByPriorityLevel, false},
		{ByRequest, []string{"component", "resource", "verb"}, ByRequest, true},
		{ByRequest, []string{"resource"}, ByRequest, false},
		{ByResourceString, []string{"group", "resource", "extra"}, ByGroupResource, true},
		{ByGroupResource, []string{"resource", "extra"}, ByResourceString, true},
		{ByGroupResource, []string{"group", "kind"}, ByGroupVersionKind, true},
		{ByGroupResource, []string{"verb"}, ByGroupResource, false},
	} {
		got, ok := sniffScheme(tc.want, tc.names)
		if got != tc.got || ok != tc.ok {
			t.Errorf("sniffScheme(%v, %q) = %v, %v; want %v, %v", tc.want, tc.names, got, ok, tc.got, tc.ok)
		}
	}
}

func TestAddNaN(t *testing.T) {
	if got := addNaN(math.NaN(), 2); got != 2 {
		t.Errorf("addNaN(NaN, 2) = %v", got)
	}
	if got := addNaN(1, 2); got != 3 {
		t.Errorf("addNaN(1, 2) = %v", got)
	}
	if got := addNaN(1, math.NaN()); !math.IsNaN(got) {
		t.Errorf("addNaN(1, NaN) = %v, want NaN", got)
	}
}

func ref[T any](v T) *T { return &v }
