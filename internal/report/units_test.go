package report

import (
	"math"
	"testing"
	"time"
)

func TestUnits(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name string
		got  string
		want string
	}{
		{"byteSize NaN", byteSize(nan), "-"},
		{"byteSize 0", byteSize(0), "0 B"},
		{"byteSize 1023", byteSize(1023), "1023 B"},
		{"byteSize 1024", byteSize(1024), "1 KiB"},
		{"byteSize 1.5 MiB", byteSize(1.5 * (1 << 20)), "1.5 MiB"},
		{"byteSize 20 KiB", byteSize(20 << 10), "20 KiB"},
		{"byteSize negative", byteSize(-2048), "-2 KiB"},
		{"byteSize EiB", byteSize(math.Pow(1024, 7)), "1024 EiB"},
		{"byteRate NaN", byteRate(nan), "-"},
		{"byteRate small", byteRate(12.5), "12.50 B/s"},
		{"byteRate KiB", byteRate(3 << 10), "3 KiB/s"},
		{"count NaN", count(nan), "-"},
		{"count whole", count(42), "42"},
		{"count fraction", count(0.12345), "0.1235"},
		{"count huge", count(1e16), "1e+16"},
		{"signed positive", signed(3), "+3"},
		{"signed zero", signed(0), "0"},
		{"signed negative", signed(-3), "-3"},
		{"signed NaN", signed(nan), "-"},
		{"rate NaN", rate(nan), "-"},
		{"rate zero", rate(0), "0"},
		{"rate small", rate(1.234), "1.23"},
		{"rate 100", rate(100.4), "100"},
		{"percent", percent(1, 3), "33%"},
		{"percent no whole", percent(1, 0), "-"},
		{"percent NaN", percent(nan, 3), "-"},
		{"seconds 45", seconds(45), "45s"},
		{"seconds 2m", seconds(120), "2m"},
		{"seconds 13m20s", seconds(800), "13m20s"},
		{"seconds 1h0m", seconds(3600), "1h0m"},
		{"seconds 1h1m", seconds(3660), "1h1m"},
		{"seconds 3601", seconds(3601), "60m1s"},
		{"seconds fraction", seconds(1.25), "1.2s"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}

func TestStarted(t *testing.T) {
	start := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	unix := float64(start.Unix())
	for _, tc := range []struct {
		name  string
		start float64
		at    time.Time
		want  string
	}{
		{"absent", math.NaN(), start, "-"},
		{"no capture time", unix, time.Time{}, "2026-11-29T10:00:00Z"},
		{"age", unix, start.Add(90*time.Minute + 400*time.Millisecond), "2026-11-29T10:00:00Z (1h30m0s before capture)"},
		{"capture before start", unix, start.Add(-time.Minute), "2026-11-29T10:00:00Z"},
	} {
		if got := started(tc.start, tc.at); got != tc.want {
			t.Errorf("%s: started = %q, want %q", tc.name, got, tc.want)
		}
	}
}
