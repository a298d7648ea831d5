package metrics

import (
	"fmt"
	"sort"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// Sample is one parsed Prometheus text exposition: the metric families of
// one API server at one moment.
//
// A Sample is not modified after Parse returns and may be read from several
// goroutines.
type Sample struct {
	// Source is the file name or URL the text came from.
	Source string
	// CapturedAt is when the text was fetched. Parse leaves it zero; the
	// caller sets it (Rates uses it when no interval is given).
	CapturedAt time.Time
	// Lines and Bytes measure the input.
	Lines int
	Bytes int
	// Skipped lists the parts of the input that could not be parsed and
	// were left out. Empty for a clean input.
	Skipped []Skipped

	families map[string]*dto.MetricFamily
}

// Skipped is a range of input lines Parse left out, and why.
type Skipped struct {
	// FromLine and ToLine are 1-based and inclusive.
	FromLine, ToLine int
	Reason           string
}

func (s Skipped) String() string {
	if s.FromLine == 0 {
		return s.Reason
	}
	if s.FromLine == s.ToLine {
		return fmt.Sprintf("line %d: %s", s.FromLine, s.Reason)
	}
	return fmt.Sprintf("lines %d-%d: %s", s.FromLine, s.ToLine, s.Reason)
}

// NewSample wraps metric families gathered in-process (for example from a
// prometheus.Gatherer) as a Sample.
func NewSample(source string, families []*dto.MetricFamily) *Sample {
	s := &Sample{Source: source, families: map[string]*dto.MetricFamily{}}
	for _, f := range families {
		if f == nil || f.GetName() == "" || len(f.GetMetric()) == 0 {
			continue
		}
		s.merge(map[string]*dto.MetricFamily{f.GetName(): f}, 0)
	}
	s.dedupe()
	return s
}

// FamilyNames returns the names of the families in the sample, sorted.
func (s *Sample) FamilyNames() []string {
	out := make([]string, 0, len(s.families))
	for n := range s.families {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Family returns the family called name, or nil. The result is shared:
// do not modify it.
func (s *Sample) Family(name string) *dto.MetricFamily { return s.families[name] }

// Series counts the samples (label sets) in all families.
func (s *Sample) Series() int {
	n := 0
	for _, f := range s.families {
		n += len(f.GetMetric())
	}
	return n
}

// merge adds the families parsed from one segment. A family seen in an
// earlier segment gets the new series appended when the types agree;
// otherwise the new series are skipped and said so.
func (s *Sample) merge(fams map[string]*dto.MetricFamily, line int) {
	names := make([]string, 0, len(fams))
	for n := range fams {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		f := fams[n]
		if len(f.GetMetric()) == 0 {
			continue
		}
		old, ok := s.families[n]
		if !ok {
			s.families[n] = f
			continue
		}
		if old.GetType() != f.GetType() {
			s.Skipped = append(s.Skipped, Skipped{FromLine: line, ToLine: line,
				Reason: fmt.Sprintf("family %q appears again as %s after %s: %d series dropped", n, strings.ToLower(f.GetType().String()), strings.ToLower(old.GetType().String()), len(f.GetMetric()))})
			continue
		}
		old.Metric = append(old.Metric, f.Metric...)
	}
}

// dedupe drops repeated label sets within a family (keeping the first), so a
// doubled line cannot double a gauge.
func (s *Sample) dedupe() {
	for _, name := range s.FamilyNames() {
		f := s.families[name]
		seen := make(map[string]bool, len(f.Metric))
		kept := f.Metric[:0]
		dropped := 0
		for _, m := range f.Metric {
			k := labelKey(m)
			if seen[k] {
				dropped++
				continue
			}
			seen[k] = true
			kept = append(kept, m)
		}
		if dropped > 0 {
			f.Metric = kept
			s.Skipped = append(s.Skipped, Skipped{
				Reason: fmt.Sprintf("family %q: %d repeated series dropped (first kept)", name, dropped)})
		}
	}
}

func labelKey(m *dto.Metric) string {
	pairs := make([]string, 0, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		pairs = append(pairs, l.GetName()+"\x00"+l.GetValue())
	}
	sort.Strings(pairs)
	return strings.Join(pairs, "\x01")
}
