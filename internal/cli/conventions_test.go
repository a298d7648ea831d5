package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/internal/replay"
)

// complete runs cobra's __complete as kubectl_complete-watch_doctor does and
// returns the offered values (the directive line dropped).
func complete(t *testing.T, args ...string) []string {
	t.Helper()
	code, out, errOut := run(t, nil, append([]string{cobra.ShellCompRequestCmd}, args...)...)
	if code != ExitOK {
		t.Fatalf("__complete %q: exit %d, stderr %q", args, code, errOut)
	}
	var vals []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(l, ":") {
			vals = append(vals, strings.SplitN(l, "\t", 2)[0])
		}
	}
	return vals
}

func TestCompletion(t *testing.T) {
	kc := writeKubeconfig(t, map[string]string{"prod-eu": "https://127.0.0.1:1", "prod-us": "https://127.0.0.1:2"})
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"replay", ""}, replay.BuiltinNames()},
		{[]string{"diagnose", "-o", ""}, []string{"table", "wide", "json", "yaml"}},
		{[]string{"analyze", "--fail-on", ""}, []string{"critical", "warning", "info", "none"}},
		{[]string{"replay", "--fail-on", ""}, []string{"none", "cut", "different"}},
		{[]string{"replay", "--columns", "upstream,"}, []string{"upstream,unpatched", "upstream,pr141899", "upstream,complete"}},
		{[]string{"diagnose", "--kubeconfig", kc, "--context", ""}, []string{"prod-eu", "prod-us"}},
		{[]string{"--kubeconfig", kc, "--cluster", ""}, []string{"prod-eu", "prod-us"}},
		{[]string{"diagnose", "--kubeconfig", kc, "--contexts", "prod-eu,"}, []string{"prod-eu,prod-us"}},
		{[]string{"version", "-o", ""}, []string{"json", "yaml"}},
	}
	for _, tc := range tests {
		got := complete(t, tc.args...)
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("__complete %q = %q, want %q", tc.args, got, tc.want)
		}
	}
}

func TestDidYouMean(t *testing.T) {
	code, _, errOut := run(t, nil, "diagnos")
	if code != ExitError || !strings.Contains(errOut, "Did you mean this?\n\tdiagnose") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

func TestVersion(t *testing.T) {
	version, commit = "v9.9.9", "0123abc"
	t.Cleanup(func() { version, commit = "", "" })
	code, out, _ := run(t, nil, "version", "-o", "json")
	var v VersionInfo
	if code != ExitOK || json.Unmarshal([]byte(out), &v) != nil || v.Version != "v9.9.9" || v.Commit != "0123abc" || !strings.HasPrefix(v.GoVersion, "go") {
		t.Errorf("version -o json: exit %d, %q", code, out)
	}
	code, out, _ = run(t, nil, "--version")
	if code != ExitOK || !strings.HasPrefix(out, "kubectl-watch_doctor v9.9.9 (commit 0123abc, go") {
		t.Errorf("--version: exit %d, %q", code, out)
	}
}

// Every command has examples, and its help lists the plugin's flags before
// the kubeconfig flags, under their own heading.
func TestHelpLayout(t *testing.T) {
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

func TestOutputForms(t *testing.T) {
	t2 := golden.Fixture("t2")
	tests := []struct {
		args []string
		want string
	}{
		// Both watches are ambiguous between the two clients (docs/analyze.md,
		// Attribution): -o name lists the candidates.
		{[]string{"-o", "name"}, "StuckInitialEvents/paced-reader|slow-informer\nSlowInitialEvents/paced-reader|slow-informer\n"},
		{[]string{"-o", "jsonpath={.findings[*].candidates[*].user}"}, "paced-reader slow-informer paced-reader slow-informer"},
		{[]string{"-o", `go-template={{range .findings}}{{.type}} {{.client.seats}}{{"\n"}}{{end}}`}, "StuckInitialEvents 1\nSlowInitialEvents 1\n"},
	}
	for _, tc := range tests {
		_, out, errOut := run(t, nil, append([]string{"analyze", t2, "--fail-on", "none"}, tc.args...)...)
		if out != tc.want {
			t.Errorf("%q: stdout %q, want %q (stderr %q)", tc.args, out, tc.want, errOut)
		}
	}
	_, out, _ := run(t, nil, "analyze", t2, "--fail-on", "none", "--no-headers")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "StuckInitialEvents ") || strings.Contains(out, "FINDING") || strings.Contains(out, "Summary") {
		t.Errorf("--no-headers:\n%s", out)
	}
	code, out, errOut := run(t, nil, "analyze", t2, "-o", "jsonpath={.findings[")
	if code != ExitError || out != "" || !strings.Contains(errOut, "invalid -o jsonpath template") {
		t.Errorf("bad template: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
