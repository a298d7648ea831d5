package cli

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// TestTemplatesEscapeWhatCameFromOutsideOnATerminal: -o jsonpath and -o
// go-template print a server's bytes raw into a pipe, as kubectl does,
// and escaped on a terminal, where the template's own tab and newline
// stay.
func TestTemplatesEscapeWhatCameFromOutsideOnATerminal(t *testing.T) {
	const hostile = "sys\x1b]0;owned\x07tem\bX\tY\u202eevil"
	r := &api.Report{APIVersion: api.GroupVersion, Kind: "Report", Findings: []api.Finding{{Client: &api.Client{User: hostile}}}}
	for _, tc := range []struct {
		output   string
		terminal bool
		want     string
	}{
		{`jsonpath={.findings[0].client.user}{"\t"}{.kind}{"\n"}`, false, hostile + "\tReport\n"},
		{`jsonpath={.findings[0].client.user}{"\t"}{.kind}{"\n"}`, true, `sys\x1b]0;owned\x07tem\x08X\tY\u202eevil` + "\tReport\n"},
		{"go-template={{range .findings}}{{.client.user}}\t{{end}}\n", false, hostile + "\t\n"},
		{"go-template={{range .findings}}{{.client.user}}\t{{end}}\n", true, `sys\x1b]0;owned\x07tem\x08X\tY\u202eevil` + "\t\n"},
	} {
		p, err := templatePrinter(tc.output)
		if err != nil {
			t.Fatal(err)
		}
		p.terminal = tc.terminal
		var b bytes.Buffer
		if err := p.Print(&b, r); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, b.String()); diff != "" {
			t.Errorf("%s, terminal %v (-want +got):\n%s", tc.output, tc.terminal, diff)
		}
	}
}
