package bundle_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/dumpgen"
	"github.com/watch-doctor/watch-doctor/pkg/bundle"
	"github.com/watch-doctor/watch-doctor/pkg/watches"
)

var benchSizes = []int{10_000, 100_000}

func sizeName(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

func reportPerGoroutine(b *testing.B, n int) {
	b.Helper()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/goroutine")
}

// checkPlanted fails b unless d's blocked initial-phase watchers with a
// wait are exactly the planted ones, each linked to its handler, APF
// goroutine and connection.
func checkPlanted(b *testing.B, d *watches.Dump, res dumpgen.Result) {
	b.Helper()
	want := map[int64]dumpgen.Planted{}
	for _, p := range res.Planted {
		want[p.WatcherID] = p
	}
	got := 0
	for _, w := range d.Watchers {
		if !(w.Blocked && w.Phase == watches.PhaseInitial && w.WaitMinutes >= 1) {
			continue
		}
		p, ok := want[w.GoroutineID]
		if !ok {
			b.Fatalf("watcher %d is stuck but was not planted", w.GoroutineID)
		}
		if w.Handler == nil || w.Handler.GoroutineID != p.HandlerID || w.APFGoroutineID != p.APFID || w.Handler.ConnGoroutineID != p.ConnID || !w.Handler.ConnInDump {
			b.Fatalf("planted watcher %d: linked to %+v, APF %d; want handler %d, APF %d, connection %d", w.GoroutineID, w.Handler, w.APFGoroutineID, p.HandlerID, p.APFID, p.ConnID)
		}
		got++
	}
	if got != len(want) || d.Goroutines != res.Goroutines {
		b.Fatalf("found %d stuck watchers of %d goroutines; want the %d planted of %d", got, d.Goroutines, len(want), res.Goroutines)
	}
}

// BenchmarkReadDebug2 measures the streaming pass analyze makes over a
// debug=2 dump: scanner and collector, then linking (Dump).
func BenchmarkReadDebug2(b *testing.B) {
	for _, n := range benchSizes {
		data, res, err := dumpgen.Cached(dumpgen.Config{Goroutines: n, Stuck: 4})
		if err != nil {
			b.Fatal(err)
		}
		b.Run("dump="+sizeName(n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			var d *watches.Dump
			for b.Loop() {
				if d, err = bundle.ReadDebug2(bytes.NewReader(data)); err != nil {
					b.Fatal(err)
				}
			}
			reportPerGoroutine(b, n)
			checkPlanted(b, d, res)
		})
	}
}
