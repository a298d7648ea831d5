package cli

import (
	"fmt"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// finishHelp walks the tree and generates what help can say from the
// flags themselves: each command's exit codes (with its own --fail-on and
// its default) and the --request-timeout default the code applies.
func finishHelp(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		long := strings.TrimRight(strings.ReplaceAll(c.Long, exitCodesHelp, ""), " \n")
		if long == "" {
			long = c.Short + "."
		}
		c.Long = long + "\n\n" + exitCodes(c)
		if f := c.Flags().Lookup("request-timeout"); f != nil {
			f.Usage = fmt.Sprintf("time limit of each request, reading the response included (e.g. 30s, 2m); 0 means %.0fs per request", defaultRequestTimeout.Seconds())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// exitCodes describes the exit codes of c from its flags.
func exitCodes(c *cobra.Command) string {
	var b strings.Builder
	b.WriteString("Exit codes:\n")
	f := c.Flags().Lookup("fail-on")
	switch {
	case f != nil && strings.HasPrefix(f.Usage, "exit 1 when a finding"):
		fmt.Fprintf(&b, "  0    no finding at or above --fail-on (default %s)\n", f.DefValue)
		b.WriteString("  1    at least one finding at or above --fail-on\n")
	case f != nil:
		fmt.Fprintf(&b, "  0    the condition of --fail-on (default %s) does not hold\n", f.DefValue)
		b.WriteString("  1    it holds (see --fail-on)\n")
	default:
		b.WriteString("  0    done\n")
	}
	b.WriteString("  2    error: bad flag, unreadable or invalid input, cluster not reachable or refused\n")
	if f != nil && strings.HasPrefix(f.Usage, "exit 1 when a finding") {
		b.WriteString("       or incomplete: nothing at or above --fail-on in what was decided, but part\n")
		b.WriteString("       was not (a partial dump, a debug=1 or protobuf dump alone, a goroutine\n")
		b.WriteString("       dump withheld for --max-pause)\n")
	}
	fmt.Fprintf(&b, "  %d  interrupted (Ctrl-C or SIGTERM)", ExitInterrupted)
	return b.String()
}

const rootExample = `  # Diagnose every API server of the current context (two samples, 70 s apart)
  kubectl watch-doctor

  # Audit several clusters in one report, for a script
  kubectl watch-doctor diagnose --contexts prod-eu,prod-us -o json

  # Diagnose files saved during an incident, or a collect bundle
  kubectl watch-doctor analyze ./t1 ./t2

  # Save everything for a support ticket
  kubectl watch-doctor collect -d ./incident

  # Replay the reproduction with and without the stall timeout
  kubectl watch-doctor replay issue-131721`

// rootArgs refuses arguments to the bare command, suggesting the
// subcommand a mistyped one was meant to be, as kubectl does (indented
// with spaces, not kubectl's tab: stderr escapes tabs, report.Escape).
func rootArgs(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
	if s := c.SuggestionsFor(args[0]); len(s) > 0 {
		msg += "\n\nDid you mean this?\n  " + strings.Join(s, "\n  ") + "\n"
	}
	return fmt.Errorf("%s\nSee '%s --help' for usage.", msg, c.CommandPath())
}

// kubeconfigFlagNames are the flags genericclioptions.ConfigFlags adds.
func kubeconfigFlagNames() map[string]bool {
	fs := pflag.NewFlagSet("kubeconfig", pflag.ContinueOnError)
	genericclioptions.NewConfigFlags(true).AddFlags(fs)
	names := map[string]bool{}
	fs.VisitAll(func(f *pflag.Flag) { names[f.Name] = true })
	return names
}

// flagUsages lists c's local flags that are (kubeconfig) or are not the
// kubeconfig flags.
func flagUsages(c *cobra.Command, kubeconfig bool) string {
	names := kubeconfigFlagNames()
	fs := pflag.NewFlagSet(c.Name(), pflag.ContinueOnError)
	c.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if names[f.Name] == kubeconfig {
			fs.AddFlag(f)
		}
	})
	return strings.TrimRight(fs.FlagUsages(), " \n")
}

// usageTemplate is cobra's layout with the flags in two groups, the
// plugin's own first and the kubeconfig flags under their own heading, as
// kubectl prints them apart.
const usageTemplate = `Usage:{{if .Runnable}}
  {{.UseLine}}{{end}}{{if .HasAvailableSubCommands}}
  {{.CommandPath}} [command]{{end}}{{if .HasExample}}

Examples:
{{.Example}}{{end}}{{if .HasAvailableSubCommands}}

Available Commands:{{range .Commands}}{{if (or .IsAvailableCommand (eq .Name "help"))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}{{with watchDoctorOwnFlags .}}

Flags:
{{.}}{{end}}{{with watchDoctorKubeconfigFlags .}}

Kubeconfig flags (as kubectl's; see kubectl options):
{{.}}{{end}}{{if .HasAvailableSubCommands}}

Use "{{.CommandPath}} [command] --help" for more information about a command.{{end}}
`

// usageFuncs adds the usage template's functions once: cobra keeps them in
// a package-level map, which two command trees built at once (the tests
// run in parallel) must not write together.
var usageFuncs sync.Once

// finishUsage installs the grouped usage on the tree.
func finishUsage(root *cobra.Command) {
	usageFuncs.Do(func() {
		cobra.AddTemplateFunc("watchDoctorOwnFlags", func(c *cobra.Command) string { return flagUsages(c, false) })
		cobra.AddTemplateFunc("watchDoctorKubeconfigFlags", func(c *cobra.Command) string { return flagUsages(c, true) })
	})
	root.SetUsageTemplate(usageTemplate)
}
