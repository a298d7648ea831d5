package diagnosis

import (
	"testing"
	"time"
)

func TestPastStallBound(t *testing.T) {
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		start, at time.Time
		want      bool
	}{
		{"young", at.Add(-10 * time.Second), at, false},
		{"exactly the bound is not past it", at.Add(-StallBound), at, false},
		{"past", at.Add(-StallBound - time.Millisecond), at, true},
		{"started after the sample (clock skew)", at.Add(time.Minute), at, false},
		{"no capture time fails closed", at.Add(-time.Second), time.Time{}, true},
		{"no start time fails closed", time.Time{}, at, true},
		{"neither", time.Time{}, time.Time{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := PastStallBound(tc.start, tc.at); got != tc.want {
				t.Errorf("PastStallBound(%v, %v) = %v, want %v", tc.start, tc.at, got, tc.want)
			}
		})
	}
}
