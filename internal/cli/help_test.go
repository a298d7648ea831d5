package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// TestHelpAgreesWithFlags: the help of each command agrees with its flags: it documents
// --fail-on only where the flag exists, with the flag's own default, and
// the request timeout as the code applies it.
func TestHelpAgreesWithFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	root := NewCmdRoot(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		long := c.Long
		f := c.Flags().Lookup("fail-on")
		if strings.Contains(long, "--fail-on") && f == nil {
			t.Errorf("%s: help mentions --fail-on, which it lacks", c.CommandPath())
		}
		if f != nil && !strings.Contains(long, "--fail-on (default "+f.DefValue+")") {
			t.Errorf("%s: help does not give --fail-on's default %q:\n%s", c.CommandPath(), f.DefValue, long)
		}
		if rt := c.Flags().Lookup("request-timeout"); rt != nil && (strings.Contains(rt.Usage, "don't timeout") || !strings.Contains(rt.Usage, "60s")) {
			t.Errorf("%s: --request-timeout says %q, but 0 means 60s", c.CommandPath(), rt.Usage)
		}
		if !strings.Contains(long, "Exit codes:") && c.Name() != "help" {
			t.Errorf("%s: no exit codes in help", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
