package trace_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/watch-doctor/watch-doctor/pkg/trace"
)

// seedTrace is the execution trace of the real kube-apiserver v1.37.2 of
// testdata/kube-apiserver-v1.37.2/trace-seed (captured by
// test/e2e/hack/capture-trace.sh).
var seedTrace = filepath.Join("..", "..", "testdata", "kube-apiserver-v1.37.2", "trace-seed", "bundle", "127.0.0.1", "trace.out")

// keepWatchPath keeps what the classifier keeps, roughly: goroutines in
// the watch cache's watchers, or waiting for WatchInitialized.
func keepWatchPath(stack []trace.Frame) bool {
	for _, f := range stack {
		if strings.Contains(f.Func, "cacher.(*cacheWatcher).processInterval") || strings.Contains(f.Func, "(*initializationSignal).Wait") {
			return true
		}
	}
	return false
}

// BenchmarkRead reads the seed server's trace as the diagnosis does:
// bytes/s of trace parsed, and the allocations per read.
func BenchmarkRead(b *testing.B) {
	data, err := os.ReadFile(seedTrace)
	if err != nil {
		b.Fatalf("the seed trace: %v", err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		sum, err := trace.Read(bytes.NewReader(data), trace.Options{Source: "seed", Keep: keepWatchPath})
		if err != nil || len(sum.Goroutines) == 0 {
			b.Fatalf("Read: %v, %d goroutines kept", err, len(sum.Goroutines))
		}
	}
}
