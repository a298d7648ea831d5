// Command kubectl-watch_doctor-replay-v1.38 runs the replay's upstream
// column on k8s.io/apiserver v0.38's own cacher: this module requires
// v0.38.0-beta.0 and Go 1.27 and compiles the main module's
// internal/replay/upstream against it (build tag apiserver_v038, which
// adds MemStore's v0.38-only methods, memstore_v038.go). `kubectl
// watch-doctor replay --upstream-release v1.38` runs it as a subprocess
// (internal/cli/replay_release.go; docs/architecture.md, "The 1.38 replay
// column").
//
// The exchange is the main module's stable forms: the scenario on stdin as
// `replay --print-scenario` writes it, and on stdout the Replay document
// (pkg/api/v1alpha1, as `replay -o json` writes it) holding the one
// upstream column, with its release, and its timeline series with
// -timeline. Progress goes to stderr.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"

	"github.com/watch-doctor/watch-doctor/internal/replay"
	"github.com/watch-doctor/watch-doctor/internal/replay/upstream"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}

// run parses the scenario on in, replays it on the upstream column and
// writes the Replay document to out.
func run(ctx context.Context, args []string, in io.Reader, out, errOut io.Writer) error {
	fs := flag.NewFlagSet("kubectl-watch_doctor-replay-v1.38", flag.ContinueOnError)
	fs.SetOutput(errOut)
	timeline := fs.Bool("timeline", false, "record the column's timeline series")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: the scenario comes on stdin", fs.Args())
	}
	sc, err := replay.Parse(in)
	if err != nil {
		return fmt.Errorf("scenario on stdin: %w", err)
	}
	res, err := replay.Run(ctx, sc, []replay.Backend{upstream.New()}, replay.Options{Timeline: *timeline, Progress: errOut})
	if err != nil {
		return err
	}
	rel, err := apiserverVersion()
	if err != nil {
		return err
	}
	for i := range res.Columns {
		res.Columns[i].Release = rel
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}

// apiserverVersion is the k8s.io/apiserver this binary was built with.
func apiserverVersion() (string, error) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "", fmt.Errorf("no build information in this binary")
	}
	for _, d := range bi.Deps {
		if d.Path == "k8s.io/apiserver" {
			if d.Replace != nil {
				return d.Replace.Version, nil
			}
			return d.Version, nil
		}
	}
	return "", fmt.Errorf("k8s.io/apiserver is not among this binary's dependencies")
}
