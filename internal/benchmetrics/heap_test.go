package benchmetrics

import (
	"runtime"
	"testing"
)

var heapSink [][]byte

// TestHeapReportsThePeaks: a loop that keeps 64 MiB live reports a peak
// heap and a peak live heap of at least most of it.
func TestHeapReportsThePeaks(t *testing.T) {
	res := testing.Benchmark(func(b *testing.B) {
		h := StartHeap()
		for range b.N {
			heapSink = nil
			for range 64 {
				heapSink = append(heapSink, make([]byte, 1<<20))
			}
			// A completed cycle marks the 64 MiB live.
			runtime.GC()
		}
		h.Report(b)
		heapSink = nil
	})
	heap, live := res.Extra["peak-heap-MiB"], res.Extra["peak-live-MiB"]
	if heap < 48 || live < 48 {
		t.Errorf("peak-heap-MiB %.1f, peak-live-MiB %.1f; want both at least 48 for 64 MiB kept live", heap, live)
	}
	if live > heap+1 {
		t.Errorf("peak-live-MiB %.1f above peak-heap-MiB %.1f", live, heap)
	}
}
