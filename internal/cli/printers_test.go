package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/watch-doctor/watch-doctor/internal/golden"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// TestEveryTableCommandHasNoHeaders: a command whose -o takes table has
// --no-headers.
func TestEveryTableCommandHasNoHeaders(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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

// TestTemplateFileIsBounded: a -o go-template-file= or jsonpath-file= over
// maxTemplateBytes is refused naming the file, and one within it is used.
func TestTemplateFileIsBounded(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.tmpl")
	if err := os.WriteFile(big, []byte("{{.kind}}"+strings.Repeat(" ", maxTemplateBytes)), 0o600); err != nil {
		t.Fatal(err)
	}
	small := filepath.Join(dir, "small.tmpl")
	if err := os.WriteFile(small, []byte("{{.kind}}"), 0o600); err != nil {
		t.Fatal(err)
	}
	t2 := golden.Fixture("t2")
	for _, kind := range []string{"go-template-file", "jsonpath-file"} {
		t.Run(kind, func(t *testing.T) {
			code, _, errOut := run(t, nil, "analyze", t2, "--fail-on", "none", "-o", kind+"="+big)
			if code != ExitError || !strings.Contains(errOut, big) || !strings.Contains(errOut, "1 MiB") {
				t.Errorf("exit %d, stderr %q: want exit %d naming %s and its 1 MiB bound", code, errOut, ExitError, big)
			}
		})
	}
	code, out, errOut := run(t, nil, "analyze", t2, "--fail-on", "none", "-o", "go-template-file="+small)
	if code != ExitOK || out != "Report" {
		t.Errorf("exit %d, stdout %q, stderr %q: want the template applied (Report)", code, out, errOut)
	}
}

// TestNameOfGroups: -o name keeps a TYPE/CLIENT line per finding, the
// members of a group included, then adds a group/TYPE/CLIENT line per
// group; a fleet's lines are each cluster's, led by its context.
func TestNameOfGroups(t *testing.T) {
	alike := api.Finding{Type: api.StuckInitialEvents, Client: &api.Client{User: "kubelet"}}
	other := api.Finding{Type: api.SlowInitialEvents, Client: &api.Client{User: "op\terator"}}
	r := &api.Report{Findings: []api.Finding{alike, other, alike, alike, alike, alike},
		Groups: []api.FindingGroup{{Type: api.StuckInitialEvents, Client: "kubelet", Count: 5, Findings: []int{0, 2, 3, 4, 5}}}}
	var plain, fleet strings.Builder
	if err := (namePrinter{}).Print(&plain, r); err != nil {
		t.Fatal(err)
	}
	want := "StuckInitialEvents/kubelet\nSlowInitialEvents/op\\terator\n" + strings.Repeat("StuckInitialEvents/kubelet\n", 4) + "group/StuckInitialEvents/kubelet\n"
	if diff := cmp.Diff(want, plain.String()); diff != "" {
		t.Errorf("-o name (-want +got):\n%s", diff)
	}
	fr := &api.FleetReport{Clusters: []api.ClusterReport{{Context: "prod", Report: r}, {Context: "down", Error: "refused"}, {Context: "dev", Report: &api.Report{Findings: []api.Finding{other}}}}}
	if err := (namePrinter{}).Print(&fleet, fr); err != nil {
		t.Fatal(err)
	}
	want = "prod/" + strings.ReplaceAll(strings.TrimSuffix(want, "\n"), "\n", "\nprod/") + "\ndev/SlowInitialEvents/op\\terator\n"
	if diff := cmp.Diff(want, fleet.String()); diff != "" {
		t.Errorf("fleet -o name (-want +got):\n%s", diff)
	}
}

// TestGroupKindIsNoFindingType: a group's -o name line cannot be read as
// a finding's: every finding type starts in upper case, the kind group in
// lower case.
func TestGroupKindIsNoFindingType(t *testing.T) {
	for _, row := range api.FindingTypes() {
		if name := string(row.Type); name == "" || name[0] < 'A' || name[0] > 'Z' {
			t.Errorf("finding type %q does not start in upper case: its -o name lines could read as %s/", name, groupKind)
		}
	}
	if groupKind[0] < 'a' || groupKind[0] > 'z' {
		t.Errorf("groupKind %q does not start in lower case", groupKind)
	}
}
