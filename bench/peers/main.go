// Command peers parses a debug=2 goroutine dump with a public parser, for
// comparison with watch-doctor in bench/run.sh. It is not part of the
// plugin: it lives in its own module so that the plugin never depends on
// the parsers it is measured against.
//
//	peers -parser gostackparse FILE   github.com/DataDog/gostackparse: Parse
//	peers -parser panicparse FILE     github.com/maruel/panicparse/v2: ScanSnapshot, then Aggregate
//
// It prints one JSON object on stdout: goroutines found, buckets (for
// panicparse), errors, and the Go runtime's allocation counters. The wall
// time and peak RSS are measured from outside by the caller.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/DataDog/gostackparse"
	"github.com/maruel/panicparse/v2/stack"
)

type result struct {
	Parser     string  `json:"parser"`
	Goroutines int     `json:"goroutines"`
	Buckets    int     `json:"buckets,omitempty"`
	Errors     int     `json:"errors"`
	Mallocs    uint64  `json:"mallocs"`
	AllocBytes uint64  `json:"allocBytes"`
	Seconds    float64 `json:"seconds"`
}

func main() {
	parser := flag.String("parser", "", "gostackparse or panicparse")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: peers -parser gostackparse|panicparse FILE")
		os.Exit(2)
	}
	if err := run(*parser, flag.Arg(0), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "peers:", err)
		os.Exit(1)
	}
}

func run(parser, path string, out io.Writer) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	res := result{Parser: parser}
	switch parser {
	case "gostackparse":
		gs, errs := gostackparse.Parse(f)
		res.Goroutines, res.Errors = len(gs), len(errs)
		runtime.KeepAlive(gs)
	case "panicparse":
		// The cheapest options: no argument naming (O(n²)), no guessing of
		// local paths, no reading of sources. Aggregate with AnyPointer is
		// what panicparse's pp command does by default.
		snap, _, err := stack.ScanSnapshot(bufio.NewReaderSize(f, 1<<20), io.Discard, &stack.Opts{})
		if err != nil && err != io.EOF {
			return fmt.Errorf("panicparse: %w", err)
		}
		if snap == nil {
			return fmt.Errorf("panicparse: no goroutines found in %s", path)
		}
		res.Goroutines = len(snap.Goroutines)
		agg := snap.Aggregate(stack.AnyPointer)
		res.Buckets = len(agg.Buckets)
	default:
		return fmt.Errorf("unknown -parser %q: use gostackparse or panicparse", parser)
	}
	res.Seconds = time.Since(start).Seconds()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	res.Mallocs = after.Mallocs - before.Mallocs
	res.AllocBytes = after.TotalAlloc - before.TotalAlloc
	return json.NewEncoder(out).Encode(res)
}
