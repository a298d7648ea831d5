package report

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/watch-doctor/watch-doctor/pkg/metrics"
)

// The units every renderer of this package prints values in: one byte
// format, one count format, one time format for the whole tool.

// byteSize prints a byte count with a binary unit: "512 B", "20 KiB",
// "1.5 MiB", "428.6 MiB" (one decimal unless whole), and an absent (NaN)
// value as "-".
func byteSize(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	const units = "KMGTPE"
	if math.Abs(v) < 1024 {
		return strconv.FormatFloat(v, 'f', 0, 64) + " B"
	}
	exp := -1
	for math.Abs(v) >= 1024 && exp < len(units)-1 {
		v /= 1024
		exp++
	}
	if v != math.Trunc(v) {
		return fmt.Sprintf("%.1f %ciB", v, units[exp])
	}
	return fmt.Sprintf("%.0f %ciB", v, units[exp])
}

// byteRate is byteSize per second.
func byteRate(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case math.Abs(v) < 1024:
		return rate(v) + " B/s"
	}
	return byteSize(v) + "/s"
}

// count prints an absent value as "-" and a whole number without decimals.
func count(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// signed is count with a "+" on positive values.
func signed(v float64) string {
	if !math.IsNaN(v) && v > 0 {
		return "+" + count(v)
	}
	return count(v)
}

// rate prints a per-second rate: two decimals below 100.
func rate(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case v == 0:
		return "0"
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// percent prints part of whole as a whole percentage.
func percent(part, whole float64) string {
	if math.IsNaN(part) || math.IsNaN(whole) || whole <= 0 {
		return "-"
	}
	return strconv.FormatFloat(100*part/whole, 'f', 0, 64) + "%"
}

// started prints the process start time, and its age at capture.
func started(start float64, at time.Time) string {
	t := metrics.UnixTime(start)
	if t.IsZero() {
		return "-"
	}
	s := t.UTC().Format(time.RFC3339)
	if !at.IsZero() {
		age := at.Sub(t)
		if age >= 0 {
			s += " (" + age.Round(time.Second).String() + " before capture)"
		}
	}
	return s
}

// seconds prints a virtual duration in seconds as 45s, 2m, 13m20s, 1h0m.
func seconds(f float64) string {
	if f == math.Trunc(f) {
		d := int64(f)
		switch {
		case d >= 3600 && d%60 == 0:
			return fmt.Sprintf("%dh%dm", d/3600, d%3600/60)
		case d >= 60:
			if d%60 == 0 {
				return fmt.Sprintf("%dm", d/60)
			}
			return fmt.Sprintf("%dm%ds", d/60, d%60)
		}
		return fmt.Sprintf("%ds", d)
	}
	return fmt.Sprintf("%.1fs", f)
}
