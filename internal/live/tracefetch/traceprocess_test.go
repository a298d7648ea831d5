package tracefetch

import (
	"math"
	"testing"
)

func TestOtherProcess(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		sample, before, after float64
		aside                 bool
	}{
		{1, 1, 1, false},
		{1, nan, nan, false}, // nothing to compare: kept
		{nan, 2, 2, false},
		{1, 2, 2, true},
		{1, 1, 2, true},
		{nan, 1, 2, true},
	} {
		if got := otherProcess("api", tc.sample, tc.before, tc.after) != nil; got != tc.aside {
			t.Errorf("otherProcess(%v, %v, %v) set aside %v, want %v", tc.sample, tc.before, tc.after, got, tc.aside)
		}
	}
}
