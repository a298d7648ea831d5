package stacks_test

import (
	"bytes"
	"os"
	"strconv"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/benchmetrics"
	"github.com/watch-doctor/watch-doctor/internal/dumpgen"
	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

// BenchmarkScanner measures parsing alone: the scanner over an in-memory
// debug=2 dump (the real t2 capture and dumps generated from the real
// captures), with and without argument text (analyze skips it). The
// 1M-goroutine dump is read by the whole-command benchmark (bench/), which
// streams it from a file.
func BenchmarkScanner(b *testing.B) {
	real, err := os.ReadFile("../../testdata/kube-apiserver-v1.37.2/seed-repro/t2/goroutine-debug2.txt")
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
				b.SetBytes(int64(len(in.data)))
				b.ReportAllocs()
				t := benchmetrics.Start()
				for b.Loop() {
					sc := stacks.NewScanner(bytes.NewReader(in.data))
					sc.SkipArgs = skip
					n := 0
					for sc.Next() {
						n++
					}
					if err := sc.Err(); err != nil {
						b.Fatal(err)
					}
					if n != in.n {
						b.Fatalf("read %d goroutines, want %d", n, in.n)
					}
				}
				t.Report(b, in.n)
			})
		}
	}
}
