package stacks_test

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/benchmetrics"
	"github.com/watch-doctor/watch-doctor/internal/dumpgen"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

// BenchmarkScanner measures parsing alone: the scanner over an in-memory
// debug=2 dump (the real t2 capture and dumps generated from the real
// captures), with and without argument text (analyze skips it). The
// 1M-goroutine dump is read by the whole-command benchmark (bench/), which
// streams it from a file.
func BenchmarkScanner(b *testing.B) {
	real, err := os.ReadFile(golden.Fixture("t2", "goroutine-debug2.txt"))
	if err != nil {
		b.Fatal(err)
	}
	type input struct {
		name string
		data []byte
		n    int
	}
	inputs := []input{{name: "real-t2", data: real, n: 2223}}
	for _, n := range []int{10_000, 100_000} {
		data, _, err := dumpgen.Cached(dumpgen.Config{Goroutines: n, Stuck: 4})
		if err != nil {
			b.Fatal(err)
		}
		inputs = append(inputs, input{name: benchmetrics.SizeName(n), data: data, n: n})
	}
	for _, in := range inputs {
		for _, skip := range []bool{true, false} {
			b.Run("dump="+in.name+"/skipArgs="+strconv.FormatBool(skip), func(b *testing.B) {
				benchScan(b, in.data, in.n, skip, 0)
			})
		}
		// The parallel scan, as watches.ReadDump runs it.
		b.Run("dump="+in.name+"/skipArgs=true/workers="+strconv.Itoa(runtime.GOMAXPROCS(0)), func(b *testing.B) {
			benchScan(b, in.data, in.n, true, runtime.GOMAXPROCS(0))
		})
	}
}

// benchScan reads data (n goroutines) with a Scanner of skipArgs and
// workers.
func benchScan(b *testing.B, data []byte, n int, skip bool, workers int) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	t := benchmetrics.Start()
	for b.Loop() {
		sc := stacks.NewScanner(bytes.NewReader(data))
		sc.SkipArgs, sc.Workers = skip, workers
		got := 0
		for sc.Next() {
			got++
		}
		if err := sc.Err(); err != nil {
			b.Fatal(err)
		}
		if got != n {
			b.Fatalf("read %d goroutines, want %d", got, n)
		}
	}
	t.Report(b, n)
}
