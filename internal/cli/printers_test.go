package cli

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// TestEveryTableCommandHasNoHeaders: a command whose -o takes table has
// --no-headers.
func TestEveryTableCommandHasNoHeaders(t *testing.T) {
	var walk func(c *cobra.Command)
	tables := 0
	walk = func(c *cobra.Command) {
		if o := c.Flags().Lookup("output"); o != nil && strings.Contains(o.Usage, "table") {
			tables++
			if c.Flags().Lookup("no-headers") == nil {
				t.Errorf("%s prints a table but has no --no-headers", c.CommandPath())
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newCmdRoot(genericiooptions.NewTestIOStreamsDiscard(), nil))
	if tables < 4 {
		t.Errorf("%d commands print a table, want analyze, diagnose, metrics and replay at least", tables)
	}
}

// TestNoHeadersPrintsTheMainRows: --no-headers is the rows of the main
// table alone, in every command, and is refused with JSON.
func TestNoHeadersPrintsTheMainRows(t *testing.T) {
	t2 := golden.Fixture("t2")
	tests := []struct {
		args  []string
		first string
	}{
		{[]string{"analyze", t2, "--fail-on", "none", "--no-headers"}, "StuckInitialEvents   critical"},
		{[]string{"metrics", t2, "--no-headers"}, "configmaps "},
		{[]string{"replay", "--list", "--no-headers"}, "client-stacks "},
	}
	for _, tc := range tests {
		t.Run(tc.args[0], func(t *testing.T) {
			code, out, errOut := run(t, nil, tc.args...)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if !strings.HasPrefix(lines[0], tc.first) {
				t.Errorf("first line %q, want a row starting %q:\n%s", lines[0], tc.first, out)
			}
			for _, l := range lines {
				if l == "" || strings.ToUpper(l) == l || strings.HasPrefix(l, "Summary") || strings.HasPrefix(l, "(") {
					t.Errorf("not a row: %q in:\n%s", l, out)
				}
			}
		})
	}
	code, _, errOut := run(t, nil, "metrics", t2, "--no-headers", "-o", "json")
	if code != ExitError || !strings.Contains(errOut, "--no-headers applies to -o table|wide, not -o json") {
		t.Errorf("--no-headers -o json: exit %d, stderr %q", code, errOut)
	}
}
