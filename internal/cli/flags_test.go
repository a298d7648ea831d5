package cli

import (
	"strings"
	"testing"
)

func TestParseFailOn(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"critical": "critical", "WARNING": "warning", "Info": "info", "none": "none"} {
		if got, err := parseFailOn(in); err != nil || got != want {
			t.Errorf("parseFailOn(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	_, err := parseFailOn("fatal")
	if err == nil || err.Error() != `unsupported --fail-on "fatal": use one of critical, warning, info, none` {
		t.Errorf("parseFailOn(fatal) = %v", err)
	}
}

// TestBadOutputAndFailOnNameTheFlag: a bad -o or --fail-on is refused
// before anything is read, naming the flag and the values it takes.
func TestBadOutputAndFailOnNameTheFlag(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"analyze", "-o", "xml", "nowhere"}, `unsupported --output "xml": use one of table, wide, json, yaml`},
		{[]string{"analyze", "--fail-on", "fatal", "nowhere"}, `unsupported --fail-on "fatal": use one of critical, warning, info, none`},
	} {
		code, out, errOut := run(t, nil, tc.args...)
		if code != ExitError || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %q", tc.args, code, out, errOut, tc.want)
		}
	}
}
