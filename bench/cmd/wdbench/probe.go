package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/watch-doctor/watch-doctor/internal/cli"
)

// probeAllocs runs analyze once in-process (wdbench probe) to count its
// allocations.
func probeAllocs(r *row, path string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	m, err := measure(10*time.Minute, self, "probe", path)
	if err != nil {
		return err
	}
	var p probeResult
	if err := json.Unmarshal(m.stdout, &p); err != nil {
		return fmt.Errorf("probe of %s: %w (stderr: %s)", path, err, firstLine(m.stderr))
	}
	r.mallocs, r.allocBytes = p.Mallocs, p.AllocBytes
	return nil
}

type probeResult struct {
	Exit       int    `json:"exit"`
	Mallocs    uint64 `json:"mallocs"`
	AllocBytes uint64 `json:"allocBytes"`
	NumGC      uint32 `json:"numGC"`
}

// probe runs `analyze FILE -o json` in this process and prints the
// allocations it made.
func probe(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: wdbench probe FILE")
		return 2
	}
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: os.Stderr}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	code := cli.Main(streams, []string{"analyze", args[0], "-o", "json"})
	runtime.ReadMemStats(&after)
	json.NewEncoder(os.Stdout).Encode(probeResult{
		Exit: code, Mallocs: after.Mallocs - before.Mallocs,
		AllocBytes: after.TotalAlloc - before.TotalAlloc, NumGC: after.NumGC - before.NumGC,
	})
	return 0
}
