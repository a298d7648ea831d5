package benchmetrics

import (
	"testing"
)

func TestSizeName(t *testing.T) {
	for n, want := range map[int]string{
		10_000: "10k", 100_000: "100k", 1_000_000: "1M", 2_000_000: "2M", 1_500_000: "1500k",
		1_000_500: "1000500", 999: "999", 1000: "1k", 0: "0",
	} {
		if got := SizeName(n); got != want {
			t.Errorf("SizeName(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestReportAddsThePerGoroutineMetrics: a benchmark reporting through a
// Timer carries ns/goroutine and, where CPU time is measured,
// cpu-ns/goroutine; ReportOp carries cpu-ns/op.
func TestReportAddsThePerGoroutineMetrics(t *testing.T) {
	_, measured := processCPU()
	res := testing.Benchmark(func(b *testing.B) {
		tm := Start()
		for b.Loop() {
			burn()
		}
		tm.Report(b, 10)
	})
	if res.Extra["ns/goroutine"] <= 0 {
		t.Errorf("ns/goroutine = %v, want > 0 (extra %v)", res.Extra["ns/goroutine"], res.Extra)
	}
	if _, ok := res.Extra["cpu-ns/goroutine"]; ok != measured {
		t.Errorf("cpu-ns/goroutine reported %v, CPU time measured %v", ok, measured)
	}
	op := testing.Benchmark(func(b *testing.B) {
		tm := Start()
		for b.Loop() {
			burn()
		}
		tm.ReportOp(b)
	})
	if _, ok := op.Extra["cpu-ns/op"]; ok != measured {
		t.Errorf("cpu-ns/op reported %v, CPU time measured %v", ok, measured)
	}
	none := testing.Benchmark(func(b *testing.B) {
		tm := Start()
		for b.Loop() {
		}
		tm.Report(b, 0)
	})
	if len(none.Extra) != 0 {
		t.Errorf("a loop of no goroutines reported %v", none.Extra)
	}
}

var sink int

func burn() {
	for i := range 10_000 {
		sink += i
	}
}
