package cli

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// TestExecuteMapsErrorsToExitCodes: nil is 0 and silent; findings are 1
// and silent (the report said it all); any other error is 2 with one
// "error:" line on stderr, control characters escaped, and nothing on
// stdout.
func TestExecuteMapsErrorsToExitCodes(t *testing.T) {
	for _, tc := range []struct {
		err        error
		code       int
		wantStderr string
	}{
		{nil, ExitOK, ""},
		{errFindings, ExitFindings, ""},
		{fmt.Errorf("apiserver-1: %w", errFindings), ExitFindings, ""},
		{errors.New("reading \"x\": bad\x1b[2J"), ExitError, "error: reading \"x\": bad\\x1b[2J\n"},
	} {
		var out, errOut bytes.Buffer
		streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
		cmd := &cobra.Command{Use: "t", SilenceErrors: true, SilenceUsage: true, RunE: func(*cobra.Command, []string) error { return tc.err }}
		cmd.SetOut(&out)
		cmd.SetErr(&errOut)
		if code := execute(cmd, streams, nil); code != tc.code || errOut.String() != tc.wantStderr || out.Len() != 0 {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want exit %d, stderr %q", tc.err, code, errOut.String(), out.String(), tc.code, tc.wantStderr)
		}
	}
}

// TestBareCommandRefusesArguments: the bare command runs diagnose and takes
// no arguments; a mistyped subcommand gets a pointer to the help, not the
// usage (TestDidYouMean: and a suggestion when one is close).
func TestBareCommandRefusesArguments(t *testing.T) {
	code, out, errOut := run(t, nil, "analyse")
	if code != ExitError || out != "" || !strings.Contains(errOut, `unknown command "analyse"`) || !strings.Contains(errOut, "See 'kubectl watch-doctor --help' for usage.") || strings.Contains(errOut, "Flags:") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
