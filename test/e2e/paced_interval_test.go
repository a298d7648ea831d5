package e2e

import (
	"testing"
	"time"
)

// TestPacedIntervalOutlastsTheSuite: the shared paced reader's replay of
// count events lasts at least until the suite's deadline, and never reads
// faster than every 400ms.
func TestPacedIntervalOutlastsTheSuite(t *testing.T) {
	now := time.Date(2026, 12, 5, 21, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		deadline time.Time
		count    int
		want     time.Duration
	}{
		{"no timeout", time.Time{}, 2000, 400 * time.Millisecond},
		{"45m, 2000 pods", now.Add(45 * time.Minute), 2000, 1500 * time.Millisecond},
		{"short run", now.Add(5 * time.Minute), 2000, 400 * time.Millisecond},
		{"no pods", now.Add(45 * time.Minute), 0, 400 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := pacedInterval(now, tt.deadline, tt.count)
			if got != tt.want {
				t.Errorf("pacedInterval = %v, want %v", got, tt.want)
			}
			if !tt.deadline.IsZero() && tt.count > 0 {
				if end := now.Add(got * time.Duration(tt.count)); end.Before(tt.deadline) {
					t.Errorf("%d reads every %v end at %v, before the deadline %v", tt.count, got, end, tt.deadline)
				}
			}
		})
	}
}
