package v1alpha1

import "testing"

func TestSeverityRank(t *testing.T) {
	for _, tc := range []struct {
		s    Severity
		want int
	}{{SeverityCritical, 2}, {SeverityWarning, 1}, {SeverityInfo, 0}, {"", -1}, {"fatal", -1}} {
		if got := tc.s.Rank(); got != tc.want {
			t.Errorf("Severity(%q).Rank() = %d, want %d", tc.s, got, tc.want)
		}
	}
}

func TestMaxSeverity(t *testing.T) {
	for _, tc := range []struct {
		sev  []Severity
		want Severity
	}{{nil, ""}, {[]Severity{SeverityInfo}, SeverityInfo}, {[]Severity{SeverityWarning, SeverityCritical, SeverityInfo}, SeverityCritical}} {
		r := &Report{}
		for _, s := range tc.sev {
			r.Findings = append(r.Findings, Finding{Severity: s})
		}
		if got := r.MaxSeverity(); got != tc.want {
			t.Errorf("MaxSeverity(%v) = %q, want %q", tc.sev, got, tc.want)
		}
	}
}
