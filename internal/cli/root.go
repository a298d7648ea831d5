// Package cli is the command tree of kubectl-watch_doctor. It is the only
// package that imports cobra, pflag or cli-runtime: each subcommand has an
// XOptions struct, NewXOptions(streams), NewCmdX(streams), and its RunE calls
// Complete (flags -> typed engine config), Validate and Run. Engines receive
// plain values, readers, writers and a clock, never flags.
package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/clock"

	"github.com/watch-doctor/watch-doctor/internal/report"
)

// Exit codes, the same for every subcommand (documented in --help and README).
const (
	// ExitOK: the command ran and found nothing at or above --fail-on.
	ExitOK = 0
	// ExitFindings: the command ran and found something at or above --fail-on.
	ExitFindings = 1
	// ExitError: bad input, an unreadable file, a bad flag, or a cluster
	// that could not be read; or an incomplete result (incompleteError).
	ExitError = 2
)

// exitCodesHelp marks where a command's help gives its exit codes; the
// text is generated from the command's flags by finishHelp, so it cannot
// contradict them.
const exitCodesHelp = "\x00exit-codes\x00"

// errFindings is returned by a command that ran to completion but found
// something at or above --fail-on. It carries no message: the report already
// said everything.
var errFindings = errors.New("findings at or above --fail-on")

// Main runs the command tree with args and returns the process exit code.
func Main(streams genericiooptions.IOStreams, args []string) int {
	return execute(NewCmdRoot(streams), streams, args)
}

// execute runs cmd with args, prints a failure on streams.ErrOut and
// returns the exit code.
func execute(cmd *cobra.Command, streams genericiooptions.IOStreams, args []string) int {
	cmd.SetArgs(args)
	silenceKlog()
	interrupted.Store(nil)
	err := cmd.Execute()
	if sig := wasInterrupted(); sig != nil {
		fmt.Fprintf(streams.ErrOut, "interrupted (%v): stopped before the command completed; what is printed above is all that was read\n", sig)
		return ExitInterrupted
	}
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, errFindings):
		return ExitFindings
	default:
		fmt.Fprintf(streams.ErrOut, "error: %s\n", report.Escape(err.Error()))
		return ExitError
	}
}

// NewCmdRoot builds `kubectl watch-doctor` and its subcommands.
func NewCmdRoot(streams genericiooptions.IOStreams) *cobra.Command {
	return newCmdRoot(streams, nil)
}

// newCmdRoot builds the tree with clk driving the live commands' sampling
// (nil: the real clock); tests pass a fake clock.
func newCmdRoot(streams genericiooptions.IOStreams, clk clock.Clock) *cobra.Command {
	// The bare command runs diagnose, with its own copy of diagnose's flags.
	o := NewDiagnoseOptions(streams)
	cmd := &cobra.Command{
		Use:     "kubectl-watch_doctor",
		Args:    rootArgs,
		Example: rootExample,
		Version: versionLine(currentVersion()),
		Short:   "Find watches stuck inside Kubernetes API servers and the clients that hold them",
		Long: `watch-doctor finds watches stuck in the initial-events phase of kube-apiserver's
watch cache (kubernetes issue 131721), names the client holding each one, and
says what it costs (goroutines, APF seats) and what the proposed stall
timeout (kubernetes PR 141899) would have done.

Without a subcommand it runs diagnose against the current kubeconfig context.
It only reads from the cluster.

` + exitCodesHelp,
		SilenceErrors: true,
		SilenceUsage:  true,
		Annotations: map[string]string{
			cobra.CommandDisplayNameAnnotation: "kubectl watch-doctor",
		},
	}
	// Like kubectl: a bad flag gets a pointer to the help, not the whole
	// usage; runtime failures get neither (SilenceUsage).
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fmt.Errorf("%w\nSee '%s --help' for usage.", err, c.CommandPath())
	})
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	cmd.SetIn(streams.In)
	cmd.CompletionOptions.DisableDefaultCmd = true
	bindLive(cmd, &o.LiveOptions, clk, streams.ErrOut, o)
	o.addFlags(cmd)
	cmd.AddCommand(newCmdDiagnose(streams, clk))
	cmd.AddCommand(newCmdCollect(streams, clk))
	cmd.AddCommand(newCmdMetrics(streams, clk))
	cmd.AddCommand(NewCmdAnalyze(streams))
	cmd.AddCommand(NewCmdReplay(streams))
	cmd.AddCommand(NewCmdServe(streams))
	cmd.AddCommand(NewCmdVersion(streams))
	cmd.SetVersionTemplate("{{.Version}}\n")
	finishHelp(cmd)
	finishCompletion(cmd)
	finishUsage(cmd)
	return cmd
}
