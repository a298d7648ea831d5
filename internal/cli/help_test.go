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
	t.Parallel()
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

func TestDidYouMean(t *testing.T) {
	t.Parallel()
	code, _, errOut := run(t, nil, "diagnos")
	if code != ExitError || !strings.Contains(errOut, "Did you mean this?\n  diagnose") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// Every command has examples, and its help lists the plugin's flags before
// the kubeconfig flags, under their own heading.
func TestHelpLayout(t *testing.T) {
	t.Parallel()
	root := NewCmdRoot(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Example == "" {
			t.Errorf("%s: no examples", c.CommandPath())
		}
		var buf bytes.Buffer
		c.SetOut(&buf)
		if err := c.Help(); err != nil {
			t.Fatal(err)
		}
		h := buf.String()
		if c.Flags().Lookup("kubeconfig") != nil {
			own, kube := strings.Index(h, "\nFlags:\n"), strings.Index(h, "\nKubeconfig flags")
			if own < 0 || kube < own || strings.Index(h, "--kubeconfig") < kube || strings.Index(h, "--output") > kube {
				t.Errorf("%s: flags not grouped:\n%s", c.CommandPath(), h)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
