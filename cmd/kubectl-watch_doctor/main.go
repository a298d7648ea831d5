// Command kubectl-watch_doctor is the kubectl plugin `kubectl watch-doctor`.
// It only wires the process's streams to the command tree and turns the
// outcome into an exit code; everything else lives in internal/cli.
package main

import (
	"os"
	"runtime/debug"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/watch-doctor/watch-doctor/internal/cli"
)

// memoryLimit is the soft limit of the Go heap unless GOMEMLIMIT says
// otherwise: the garbage collector runs earlier instead of letting the
// heap double past what is live. A diagnosis of 50,000 stuck watches keeps
// about 150 MiB live (bench/README.md, "Matching"): at 160 MiB the
// collector ran almost without pause (30% of the CPU); at 192 MiB the
// storms take 25 to 30% less CPU and stay under 256 MiB of RSS.
const memoryLimit = 192 << 20

func main() {
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(memoryLimit)
	}
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	os.Exit(cli.Main(streams, os.Args[1:]))
}
