package cli

import (
	"strings"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// TestOutputForms: analyze's kubectl output forms (-o name, jsonpath,
// go-template, --no-headers) say who holds each watch as the table does,
// and a template that does not parse is an error on stderr with nothing on
// stdout.
func TestOutputForms(t *testing.T) {
	t2 := golden.Fixture("t2")
	tests := []struct {
		args []string
		want string
	}{
		// Both watches are ambiguous between the two clients (docs/analyze.md,
		// Attribution): -o name lists the candidates, as the table's CLIENT
		// column does (Finding.ClientLabel).
		{[]string{"-o", "name"}, "StuckInitialEvents/paced-reader | slow-informer\nSlowInitialEvents/paced-reader | slow-informer\n"},
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
