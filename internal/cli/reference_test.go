package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// referenceDir is where the flag reference is generated, from this
// package's directory.
var referenceDir = filepath.Join("..", "..", "docs", "reference")

// TestReference keeps docs/reference in step with the command tree: one
// page per command, generated from the same cobra tree --help prints (so
// the exit codes and defaults are those finishHelp generates), and an
// index. A flag added, removed or reworded makes it fail until the pages
// are regenerated:
//
//	go test ./internal/cli -run TestReference -update
func TestReference(t *testing.T) {
	// cli-runtime's --cache-dir defaults to the home directory of whoever
	// runs the test; the reference names it as a user would read it.
	t.Setenv("KUBECACHEDIR", "$HOME/.kube/cache")
	pages := referencePages(NewCmdRoot(genericiooptions.NewTestIOStreamsDiscard()))
	if len(pages) < 7 {
		t.Fatalf("generated %d pages, want the index and one per command", len(pages))
	}
	for name, b := range pages {
		golden.AssertFile(t, filepath.Join(referenceDir, name), b)
	}
	// A page of a command that no longer exists is stale too.
	entries, err := os.ReadDir(referenceDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, ok := pages[e.Name()]; ok {
			continue
		}
		path := filepath.Join(referenceDir, e.Name())
		if golden.Updating() {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s is no command's page: remove it (go test ./internal/cli -run TestReference -update)", path)
	}
}

// TestReferencePage pins the layout of one page on a small tree, so the
// generator is tested apart from what the real commands say.
func TestReferencePage(t *testing.T) {
	root := &cobra.Command{Use: "kubectl-watch_doctor", Short: "Root", Annotations: map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl watch-doctor"}}
	sub := &cobra.Command{Use: "look PATH", Short: "Look at PATH", Long: "Look at PATH.\n\n  0  done", Example: "  kubectl watch-doctor look ./x", RunE: func(*cobra.Command, []string) error { return nil }}
	sub.Flags().StringP("output", "o", "table", "output format")
	sub.Flags().String("kubeconfig", "", "path to the kubeconfig file")
	root.AddCommand(sub)
	pages := referencePages(root)
	want := "# kubectl watch-doctor look\n\n" +
		"Look at PATH\n\n" +
		"```text\nLook at PATH.\n\n  0  done\n```\n\n" +
		"## Usage\n\n```sh\nkubectl watch-doctor look PATH [flags]\n```\n\n" +
		"## Examples\n\n```sh\n  kubectl watch-doctor look ./x\n```\n\n" +
		"## Flags\n\n```text\n  -o, --output string   output format (default \"table\")\n```\n\n" +
		"## Kubeconfig flags\n\nAs kubectl's (see `kubectl options`).\n\n```text\n      --kubeconfig string   path to the kubeconfig file\n```\n\n" +
		"## See also\n\n- [kubectl watch-doctor](kubectl-watch_doctor.md): Root\n\n" +
		"Generated from the command tree by `go test ./internal/cli -run TestReference -update`: do not edit.\n"
	if diff := cmp.Diff(want, string(pages["kubectl-watch_doctor_look.md"])); diff != "" {
		t.Errorf("page (-want +got):\n%s", diff)
	}
	if idx := string(pages["README.md"]); !strings.Contains(idx, "| [`kubectl watch-doctor look`](kubectl-watch_doctor_look.md) | Look at PATH |") {
		t.Errorf("index does not link the page:\n%s", idx)
	}
}

// referencePages renders the reference of root's tree: a page per
// available command, named as cobra/doc names them
// (kubectl-watch_doctor_analyze.md), and README.md, the index.
func referencePages(root *cobra.Command) map[string][]byte {
	pages := map[string][]byte{}
	var index bytes.Buffer
	index.WriteString("# Command reference\n\n")
	index.WriteString("Every command and flag of `kubectl watch-doctor`, as `--help` prints them.\n\n")
	index.WriteString("| command | what it does |\n|---|---|\n")
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		name := pageName(c)
		pages[name] = referencePage(c)
		fmt.Fprintf(&index, "| [`%s`](%s) | %s |\n", c.CommandPath(), name, c.Short)
		for _, sub := range availableCommands(c) {
			walk(sub)
		}
	}
	walk(root)
	index.WriteString("\nGenerated from the command tree by `go test ./internal/cli -run TestReference -update`: do not edit.\n")
	pages["README.md"] = index.Bytes()
	return pages
}

// availableCommands are c's subcommands a user can run, by name.
func availableCommands(c *cobra.Command) []*cobra.Command {
	var subs []*cobra.Command
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			subs = append(subs, sub)
		}
	}
	sort.Slice(subs, func(i, j int) bool { return subs[i].Name() < subs[j].Name() })
	return subs
}

func pageName(c *cobra.Command) string {
	name := c.Name()
	for p := c.Parent(); p != nil; p = p.Parent() {
		name = p.Name() + "_" + name
	}
	return name + ".md"
}

// referencePage renders one command's page.
func referencePage(c *cobra.Command) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n\n%s\n\n", c.CommandPath(), c.Short)
	if c.Long != "" {
		fmt.Fprintf(&b, "```text\n%s\n```\n\n", strings.TrimRight(c.Long, "\n"))
	}
	if c.Runnable() {
		fmt.Fprintf(&b, "## Usage\n\n```sh\n%s\n```\n\n", c.UseLine())
	}
	if c.Example != "" {
		fmt.Fprintf(&b, "## Examples\n\n```sh\n%s\n```\n\n", strings.TrimRight(c.Example, "\n"))
	}
	c.InitDefaultHelpFlag()
	if own := withoutHelpFlag(flagUsages(c, false)); own != "" {
		fmt.Fprintf(&b, "## Flags\n\n```text\n%s\n```\n\n", own)
	}
	if kube := flagUsages(c, true); kube != "" {
		fmt.Fprintf(&b, "## Kubeconfig flags\n\nAs kubectl's (see `kubectl options`).\n\n```text\n%s\n```\n\n", kube)
	}
	var also []string
	if p := c.Parent(); p != nil {
		also = append(also, fmt.Sprintf("- [%s](%s): %s", p.CommandPath(), pageName(p), p.Short))
	}
	for _, sub := range availableCommands(c) {
		also = append(also, fmt.Sprintf("- [%s](%s): %s", sub.CommandPath(), pageName(sub), sub.Short))
	}
	if len(also) > 0 {
		fmt.Fprintf(&b, "## See also\n\n%s\n\n", strings.Join(also, "\n"))
	}
	b.WriteString("Generated from the command tree by `go test ./internal/cli -run TestReference -update`: do not edit.\n")
	return b.Bytes()
}

// withoutHelpFlag drops the -h, --help line every command has.
func withoutHelpFlag(usages string) string {
	var keep []string
	for _, l := range strings.Split(usages, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "-h, --help") {
			continue
		}
		keep = append(keep, l)
	}
	return strings.TrimRight(strings.Join(keep, "\n"), " \n")
}
