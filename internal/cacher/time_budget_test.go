package cacher

import (
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"
)

// TestTimeBudget steps a fake clock through upstream's budget rules: 50 ms
// gained per second, at most 100 ms held, all of it handed out at once, and
// what is returned never beyond the cap nor charged when overdrawn.
func TestTimeBudget(t *testing.T) {
	clk := testingclock.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	b := newTimeBudget(clk)
	steps := []struct {
		advance time.Duration
		unused  time.Duration
		want    time.Duration
	}{
		{0, 0, 0},                                     // nothing accumulated yet
		{time.Second, 0, 50 * time.Millisecond},       // one second: 50 ms
		{10 * time.Second, 0, 100 * time.Millisecond}, // capped at 100 ms
		{0, 30 * time.Millisecond, 0},                 // emptied by the take before
		{0, 0, 30 * time.Millisecond},                 // what was given back
		{0, -time.Second, 0},                          // an overdraft is not charged
		{0, time.Hour, 0},                             // giving back more than the cap...
		{0, 0, 100 * time.Millisecond},                // ...holds the cap
		{500 * time.Millisecond, 0, 25 * time.Millisecond},
	}
	for i, st := range steps {
		clk.SetTime(clk.Now().Add(st.advance))
		if got := b.takeAvailable(); got != st.want {
			t.Errorf("step %d: takeAvailable() = %v, want %v", i, got, st.want)
		}
		b.returnUnused(st.unused)
	}
}
