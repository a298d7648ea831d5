package metrics

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
)

// family returns a family of type typ named name with one series per value
// of label "l", or one unlabelled series when there are no values.
func family(name string, typ dto.MetricType, values ...string) *dto.MetricFamily {
	f := &dto.MetricFamily{Name: &name, Type: &typ}
	if len(values) == 0 {
		f.Metric = append(f.Metric, &dto.Metric{})
	}
	for _, v := range values {
		l, v := "l", v
		f.Metric = append(f.Metric, &dto.Metric{Label: []*dto.LabelPair{{Name: &l, Value: &v}}})
	}
	return f
}

func skippedStrings(s *Sample) []string {
	var out []string
	for _, sk := range s.Skipped {
		out = append(out, sk.String())
	}
	return out
}

func TestNewSample(t *testing.T) {
	s := NewSample("gathered", []*dto.MetricFamily{
		nil,
		family("b_total", dto.MetricType_COUNTER, "x", "y", "x"),
		family("a", dto.MetricType_GAUGE),
		{Name: new(string)},
		{Name: new("no_series")},
	})
	if diff := cmp.Diff([]string{"a", "b_total"}, s.FamilyNames()); diff != "" {
		t.Errorf("FamilyNames (-want +got):\n%s", diff)
	}
	if got := s.Series(); got != 3 {
		t.Errorf("Series() = %d, want 3 (the repeated x dropped)", got)
	}
	if s.Family("no_series") != nil {
		t.Error(`Family("no_series") is not nil: a family without series is kept`)
	}
	if diff := cmp.Diff([]string{`family "b_total": 1 repeated series dropped (first kept)`}, skippedStrings(s)); diff != "" {
		t.Errorf("Skipped (-want +got):\n%s", diff)
	}
}

// TestSampleMerge appends a family's series seen again with the same type,
// and drops (saying so) those seen again with another.
func TestSampleMerge(t *testing.T) {
	s := NewSample("segments", []*dto.MetricFamily{family("a", dto.MetricType_GAUGE, "x")})
	s.merge(map[string]*dto.MetricFamily{"a": family("a", dto.MetricType_GAUGE, "y")}, 10)
	s.merge(map[string]*dto.MetricFamily{"a": family("a", dto.MetricType_COUNTER, "z")}, 20)
	if got := len(s.Family("a").GetMetric()); got != 2 {
		t.Errorf("a has %d series, want 2 (x and y)", got)
	}
	want := []string{`line 20: family "a" appears again as counter after gauge: 1 series dropped`}
	if diff := cmp.Diff(want, skippedStrings(s)); diff != "" {
		t.Errorf("Skipped (-want +got):\n%s", diff)
	}
}

func TestSkippedString(t *testing.T) {
	tests := []struct {
		in   Skipped
		want string
	}{
		{in: Skipped{Reason: "r"}, want: "r"},
		{in: Skipped{FromLine: 3, ToLine: 3, Reason: "r"}, want: "line 3: r"},
		{in: Skipped{FromLine: 3, ToLine: 5, Reason: "r"}, want: "lines 3-5: r"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.in.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}
