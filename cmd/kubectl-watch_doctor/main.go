// Command kubectl-watch_doctor is the kubectl plugin `kubectl watch-doctor`.
// It only wires the process's streams to the command tree and turns the
// outcome into an exit code; everything else lives in pkg/cli.
package main

import (
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/watch-doctor/watch-doctor/pkg/cli"
)

func main() {
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	os.Exit(cli.Main(streams, os.Args[1:]))
}
