package benchmetrics

import (
	"runtime/metrics"
	"testing"
	"time"
)

// Heap samples the Go heap while a benchmark loop runs, every
// heapSampleEvery, through runtime/metrics (no stop-the-world, unlike
// runtime.ReadMemStats). Not safe for concurrent use: one loop, one Heap.
type Heap struct {
	stop, done chan struct{}
	// objects is the peak of heap objects (live and not yet swept, what
	// the garbage collector's pacing lets grow); live the peak of the heap
	// marked live by a completed GC cycle.
	objects, live uint64
}

const heapSampleEvery = 2 * time.Millisecond

// StartHeap starts sampling: call it just before the loop.
func StartHeap() *Heap {
	h := &Heap{stop: make(chan struct{}), done: make(chan struct{})}
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
	go func() {
		defer close(h.done)
		t := time.NewTicker(heapSampleEvery)
		defer t.Stop()
		for {
			metrics.Read(samples)
			if samples[0].Value.Kind() == metrics.KindUint64 {
				h.objects = max(h.objects, samples[0].Value.Uint64())
			}
			if samples[1].Value.Kind() == metrics.KindUint64 {
				h.live = max(h.live, samples[1].Value.Uint64())
			}
			select {
			case <-h.stop:
				return
			case <-t.C:
			}
		}
	}()
	return h
}

// Report stops sampling and adds peak-heap-MiB (heap objects, garbage not
// yet swept included) and peak-live-MiB (the largest heap a GC cycle found
// live) to b. Call it right after the loop. Both are sampled, so a peak
// shorter than heapSampleEvery may be missed.
func (h *Heap) Report(b *testing.B) {
	b.Helper()
	close(h.stop)
	<-h.done
	b.ReportMetric(float64(h.objects)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(h.live)/(1<<20), "peak-live-MiB")
}
