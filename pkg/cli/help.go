package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
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
	fmt.Fprintf(&b, "  %d  interrupted (Ctrl-C or SIGTERM)", ExitInterrupted)
	return b.String()
}
