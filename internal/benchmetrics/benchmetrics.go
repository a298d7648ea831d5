// Package benchmetrics adds the per-goroutine metrics of the watch-doctor
// benchmarks (bench/README.md) to Go benchmarks: wall and CPU time per
// goroutine of the dump read. CPU time (user+sys of the whole process,
// garbage collection included) is steadier than wall time on a shared
// machine, where other work takes turns on the cores.
package benchmetrics

import (
	"strconv"
	"testing"
	"time"
)

// Timer measures the CPU time of a benchmark loop.
type Timer struct {
	cpu0 time.Duration
	ok   bool
}

// Start returns a Timer started now: call it just before the loop.
func Start() Timer {
	c, ok := processCPU()
	return Timer{cpu0: c, ok: ok}
}

// Report adds ns/goroutine (wall, from b.Elapsed) and cpu-ns/goroutine to
// b, for a loop that read goroutines goroutines per iteration. Call it
// right after the loop.
func (t Timer) Report(b *testing.B, goroutines int) {
	b.Helper()
	c, ok := processCPU()
	per := float64(b.N) * float64(goroutines)
	if per <= 0 {
		return
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/per, "ns/goroutine")
	if ok && t.ok {
		b.ReportMetric(float64((c-t.cpu0).Nanoseconds())/per, "cpu-ns/goroutine")
	}
}

// ReportOp adds cpu-ns/op to b, for benchmarks whose work does not scale
// with goroutines. Call it right after the loop.
func (t Timer) ReportOp(b *testing.B) {
	b.Helper()
	if c, ok := processCPU(); ok && t.ok && b.N > 0 {
		b.ReportMetric(float64((c-t.cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

// SizeName names a dump by its goroutines: 10k, 100k, 1M.
func SizeName(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return strconv.Itoa(n/1_000_000) + "M"
	case n >= 1000 && n%1000 == 0:
		return strconv.Itoa(n/1000) + "k"
	}
	return strconv.Itoa(n)
}
