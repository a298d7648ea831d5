package watches_test

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/benchmetrics"
	"github.com/watch-doctor/watch-doctor/internal/watches"
)

// traceBenchEnv names an execution trace file to benchmark besides the
// shipped one: the 70 s trace of a 22,000-goroutine server (issue 18) is
// 50 MB, too big for git (docs/diagnose-at-scale.md has its figures).
const traceBenchEnv = "WATCH_DOCTOR_BENCH_TRACE"

// BenchmarkReadTrace reads an execution trace as analyze does
// (watches.ReadTrace: the parser with the classifier's Keep, then the
// classification): MB/s of trace, B/op, and the peak heap while reading.
// The trace is read from memory, so the file's bytes are not counted in
// the heap: peak-live-MiB is what the read itself keeps.
func BenchmarkReadTrace(b *testing.B) {
	files := map[string]string{
		"seed": filepath.Join("..", "..", "testdata", "kube-apiserver-v1.37.2", "trace-seed", "bundle", "127.0.0.1", "trace.out"),
	}
	if f := os.Getenv(traceBenchEnv); f != "" {
		files["env"] = f
	}
	for _, name := range []string{"seed", "env"} {
		path, ok := files[name]
		if !ok {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatalf("the %s trace: %v", name, err)
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			runtime.GC()
			heap := benchmetrics.StartHeap()
			t := benchmetrics.Start()
			var kept int
			for b.Loop() {
				tr, err := watches.ReadTrace(bytes.NewReader(data), watches.TraceOptions{Source: path})
				if err != nil || tr == nil || len(tr.Goroutines) == 0 {
					b.Fatalf("ReadTrace(%s): %v", path, err)
				}
				kept = len(tr.Goroutines)
			}
			t.ReportOp(b)
			heap.Report(b)
			b.ReportMetric(float64(kept), "kept-goroutines")
		})
	}
}
