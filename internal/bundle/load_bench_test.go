package bundle_test

import (
	"bytes"
	"compress/gzip"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/benchmetrics"
	"github.com/watch-doctor/watch-doctor/internal/bundle"
	"github.com/watch-doctor/watch-doctor/internal/dumpgen"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/internal/watches"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

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
		if !w.Blocked || w.Phase != api.PhaseInitial || w.WaitMinutes < 1 {
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
	for _, n := range []int{10_000, 100_000} {
		data, res, err := dumpgen.Cached(dumpgen.Config{Goroutines: n, Stuck: 4})
		if err != nil {
			b.Fatal(err)
		}
		b.Run("dump="+benchmetrics.SizeName(n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			var d *watches.Dump
			t := benchmetrics.Start()
			for b.Loop() {
				if d, err = bundle.ReadDebug2(bytes.NewReader(data)); err != nil {
					b.Fatal(err)
				}
			}
			t.Report(b, n)
			checkPlanted(b, d, res)
		})
	}
}

// BenchmarkOpenGzip measures a gzipped dump (as `curl | gzip` or a
// collect bundle hands it over): detection, decompression and the same
// streaming pass. MB/s counts uncompressed bytes.
func BenchmarkOpenGzip(b *testing.B) {
	const n = 100_000
	data, res, err := dumpgen.Cached(dumpgen.Config{Goroutines: n, Stuck: 4})
	if err != nil {
		b.Fatal(err)
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestSpeed)
	zw.Write(data)
	if err := zw.Close(); err != nil {
		b.Fatal(err)
	}
	b.Run("dump="+benchmetrics.SizeName(n), func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		var d *watches.Dump
		t := benchmetrics.Start()
		for b.Loop() {
			kind, r, err := bundle.Open(bytes.NewReader(gz.Bytes()))
			if err != nil || kind != api.FileGoroutineDebug2 {
				b.Fatalf("Open: %s, %v", kind, err)
			}
			if d, err = bundle.ReadDebug2(r); err != nil {
				b.Fatal(err)
			}
		}
		t.Report(b, n)
		b.ReportMetric(float64(gz.Len())/float64(len(data)), "gzip-ratio")
		checkPlanted(b, d, res)
	})
}

// BenchmarkLoad measures reading a whole real capture directory: the
// debug=2, debug=1 and protobuf dumps (debug=2 wins), APF dumps, /metrics
// (2.3 MB), /version and the capture time.
func BenchmarkLoad(b *testing.B) {
	dir := golden.Fixture("t2")
	b.ReportAllocs()
	t := benchmetrics.Start()
	for b.Loop() {
		l, err := bundle.Load([]string{dir}, bundle.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if len(l.Captures) != 1 || l.Captures[0].Dump == nil || l.Captures[0].Metrics == nil {
			b.Fatalf("loaded %d captures, want 1 with a dump and metrics", len(l.Captures))
		}
	}
	t.ReportOp(b)
}
