package replay

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// hourOf137631 scales the built-in issue-137631 to the brief's size: 20000
// pods, 1000 cluster-wide stream-listing clients spread over one virtual
// hour (990 that read everything, 10 that stop after 300 events), pods
// changing twice a second.
func hourOf137631(tb testing.TB) *Scenario {
	tb.Helper()
	sc, err := Builtin("issue-137631")
	if err != nil {
		tb.Fatal(err)
	}
	sc.Duration = Duration{time.Hour}
	sc.Resources[0].Objects[0].Count = 10000
	sc.Resources[0].Objects[1].Count = 10000
	sc.Clients[0].Count = 990
	sc.Clients[0].Every = Duration{3600 * time.Millisecond}
	sc.Clients[1].Count = 10
	sc.Clients[1].Every = Duration{6 * time.Minute}
	if err := sc.complete(); err != nil {
		tb.Fatal(err)
	}
	return sc
}

// peakHeap samples the heap in use until stop is closed.
func peakHeap(stop <-chan struct{}) *atomic.Uint64 {
	var peak atomic.Uint64
	var ms runtime.MemStats
	sample := func() {
		runtime.ReadMemStats(&ms)
		if ms.HeapInuse > peak.Load() {
			peak.Store(ms.HeapInuse)
		}
	}
	go func() {
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			sample()
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return &peak
}

// BenchmarkIssue137631Hour replays one virtual hour of issue-137631 at
// 1000 clients and 20000 objects on internal/cacher, unpatched and patched
// (the upstream column settles by goroutine dumps and is not meant for
// this size). It reports the wall time per hour and the peak heap.
func BenchmarkIssue137631Hour(b *testing.B) {
	for _, col := range []struct {
		name  string
		stall time.Duration
	}{{api.ColumnUnpatched, 0}, {api.ColumnPR141899, 30 * time.Second}} {
		b.Run(col.name, func(b *testing.B) {
			sc := hourOf137631(b)
			runtime.GC()
			stop := make(chan struct{})
			var once sync.Once
			peak := peakHeap(stop)
			defer once.Do(func() { close(stop) })
			b.ResetTimer()
			var res *api.Replay
			for i := 0; i < b.N; i++ {
				var err error
				res, err = Run(context.Background(), sc, []Backend{NewOurs(col.name, col.stall)}, Options{})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			once.Do(func() { close(stop) })
			b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(b.Elapsed().Seconds())/float64(b.N), "wall-s/virtual-hour")
			c := res.Columns[0]
			b.ReportMetric(float64(c.BlockedGoroutines), "blocked-at-end")
		})
	}
}
