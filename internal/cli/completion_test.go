package cli

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"

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
	t.Parallel()
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
