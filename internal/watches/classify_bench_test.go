package watches_test

import (
	"bytes"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/benchmetrics"
	"github.com/watch-doctor/watch-doctor/internal/dumpgen"
	"github.com/watch-doctor/watch-doctor/internal/watches"
	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

// parsed returns the goroutines of a generated dump, parsed once (with
// SkipArgs, as analyze reads them) and kept, so that the benchmarks below
// measure classification and linking alone.
func parsed(b *testing.B, n, stuck int) ([]*stacks.Goroutine, stacks.Stats, dumpgen.Result) {
	b.Helper()
	data, res, err := dumpgen.Cached(dumpgen.Config{Goroutines: n, Stuck: stuck})
	if err != nil {
		b.Fatal(err)
	}
	sc := stacks.NewScanner(bytes.NewReader(data))
	sc.SkipArgs = true
	var gs []*stacks.Goroutine
	for sc.Next() {
		gs = append(gs, sc.Goroutine().Clone())
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	return gs, sc.Stats(), res
}

// BenchmarkCollectorAdd measures classification: Collector.Add over every
// goroutine of a dump, as ReadDebug2 calls it while the scanner streams.
func BenchmarkCollectorAdd(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		gs, _, _ := parsed(b, n, 4)
		b.Run("dump="+benchmetrics.SizeName(n), func(b *testing.B) {
			b.ReportAllocs()
			t := benchmetrics.Start()
			for b.Loop() {
				c := watches.NewCollector()
				for _, g := range gs {
					c.Add(g)
				}
			}
			t.Report(b, n)
		})
	}
}

// BenchmarkDump measures linking: Collector.Dump after a whole dump was
// added.
func BenchmarkDump(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		gs, stats, res := parsed(b, n, 4)
		c := watches.NewCollector()
		for _, g := range gs {
			c.Add(g)
		}
		b.Run("dump="+benchmetrics.SizeName(n), func(b *testing.B) {
			b.ReportAllocs()
			var d *watches.Dump
			for b.Loop() {
				d = c.Dump(stats)
			}
			b.ReportMetric(float64(len(d.Watchers)), "watchers")
			stuck := 0
			for _, w := range d.Watchers {
				if w.Blocked && w.WaitMinutes >= 1 {
					stuck++
				}
			}
			if stuck != len(res.Planted) {
				b.Fatalf("%d blocked watchers with a wait, want the %d planted", stuck, len(res.Planted))
			}
		})
	}
}
