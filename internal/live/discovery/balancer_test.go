package discovery

import (
	"testing"
)

func TestStartOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text string
		want float64
		ok   bool
	}{
		{"# HELP process_start_time_seconds x\nprocess_start_time_seconds 1.76441e+09\n", 1.76441e+09, true},
		{"process_start_time_seconds_other 3\nprocess_start_time_seconds 1764410000.25", 1764410000.25, true},
		{"go_goroutines 12\n", 0, false},
		{"process_start_time_seconds NaN\n", 0, false},
		{"process_start_time_seconds +Inf\n", 0, false},
	} {
		got, ok := startOf([]byte(tc.text))
		if ok != tc.ok || ok && got != tc.want {
			t.Errorf("startOf(%q) = %v, %v; want %v, %v", tc.text, got, ok, tc.want, tc.ok)
		}
	}
}
