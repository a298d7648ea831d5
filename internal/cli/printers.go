package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/moby/term"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/watch-doctor/watch-doctor/internal/report"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// Output forms beyond report.Formats(), as kubectl spells them: -o name, and
// templates through cli-runtime's printers.
const (
	outputName       = "name"
	noHeadersSuffix  = ";no-headers"
	templatePrefixes = "jsonpath=, jsonpath-file=, go-template=, go-template-file="
)

// addReportOutputFlag is addOutputFlag for the commands that write a
// diagnosis (analyze, diagnose): it also takes name, jsonpath= and
// go-template=, and --no-headers.
func addReportOutputFlag(cmd *cobra.Command, p *string, noHeaders *bool) {
	addOutputFlag(cmd, p)
	f := cmd.Flags().Lookup("output")
	f.Usage += ", name, " + templatePrefixes + "TEMPLATE"
	cmd.Flags().BoolVar(noHeaders, "no-headers", *noHeaders, "with -o table|wide: print the findings' rows only, without headers, summary or advice")
}

// parseOutput resolves -o and --no-headers into the format writeReport
// understands: a report.Format, or the raw -o value for name and templates
// (checked here, so a bad template fails before any cluster is read).
func parseOutput(s string, noHeaders bool) (report.Format, error) {
	if s == outputName {
		return report.Format(s), nil
	}
	if isTemplateOutput(s) {
		if _, err := templatePrinter(s); err != nil {
			return "", err
		}
		return report.Format(s), nil
	}
	f, err := parseFormat(s)
	if err != nil {
		return "", fmt.Errorf("%w, name, %sTEMPLATE", err, templatePrefixes)
	}
	if noHeaders {
		if f.Structured() {
			return "", fmt.Errorf("--no-headers applies to -o table|wide, not -o %s", s)
		}
		return f + noHeadersSuffix, nil
	}
	return f, nil
}

func isTemplateOutput(s string) bool {
	for _, p := range strings.Split(templatePrefixes, ", ") {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// templatePrinter builds cli-runtime's printer for a template -o value.
func templatePrinter(s string) (printers.ResourcePrinter, error) {
	kind, tmpl, _ := strings.Cut(s, "=")
	if strings.HasSuffix(kind, "-file") {
		b, err := os.ReadFile(tmpl)
		if err != nil {
			return nil, fmt.Errorf("invalid -o %s: %w", kind, err)
		}
		tmpl, kind = string(b), strings.TrimSuffix(kind, "-file")
	}
	if tmpl == "" {
		return nil, fmt.Errorf("invalid -o %s=: the template is empty", kind)
	}
	var p printers.ResourcePrinter
	var err error
	if kind == "jsonpath" {
		var jp *printers.JSONPathPrinter
		if jp, err = printers.NewJSONPathPrinter(tmpl); err == nil {
			jp.AllowMissingKeys(true)
			p = jp
		}
	} else {
		p, err = printers.NewGoTemplatePrinter([]byte(tmpl))
	}
	if err != nil {
		return nil, fmt.Errorf("invalid -o %s template %q: %w", kind, tmpl, err)
	}
	return p, nil
}

// printObject runs a template printer over v (any JSON-marshalable
// report), as kubectl does over an object.
func printObject(w io.Writer, v any, f report.Format) error {
	p, err := templatePrinter(string(f))
	if err != nil {
		return err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	obj := &unstructured.Unstructured{}
	if err := json.Unmarshal(b, &obj.Object); err != nil {
		return err
	}
	return p.PrintObj(obj, w)
}

// renderDiagnosis writes r in format f: templates and name here, table and
// wide styled for a terminal, the rest by internal/report.
func renderDiagnosis(w io.Writer, r *api.Report, f report.Format) error {
	switch {
	case f == outputName:
		var b strings.Builder
		for _, fd := range r.Findings {
			client := "unmatched"
			switch {
			case fd.Client == nil:
			case fd.Client.User != "":
				client = fd.Client.User
			case len(fd.CandidateUsers()) > 0:
				// Ambiguous: one of these holds it.
				client = strings.Join(fd.CandidateUsers(), "|")
			}
			fmt.Fprintf(&b, "%s/%s\n", fd.Type, client)
		}
		_, err := io.WriteString(w, report.Escape(b.String()))
		return err
	case isTemplateOutput(string(f)):
		return printObject(w, r, f)
	case strings.HasSuffix(string(f), noHeadersSuffix):
		base := report.Format(strings.TrimSuffix(string(f), noHeadersSuffix))
		var buf bytes.Buffer
		if err := report.RenderReportStyled(&buf, r, base, terminalStyle(w)); err != nil {
			return err
		}
		// The findings table is the first block; drop its header row.
		block, _, _ := strings.Cut(buf.String(), "\n\n")
		if len(r.Findings) == 0 {
			return nil
		}
		_, rows, _ := strings.Cut(block, "\n")
		_, err := io.WriteString(w, rows+"\n")
		return err
	}
	return report.RenderReportStyled(w, r, f, terminalStyle(w))
}

// terminalStyle styles output for w when it is a terminal: colour unless
// NO_COLOR (or TERM=dumb), and lines wrapped to its width.
func terminalStyle(w io.Writer) report.Style {
	fd, isTerm := term.GetFdInfo(w)
	if !isTerm {
		return report.Style{}
	}
	st := report.Style{Color: printers.AllowsColorOutput(w)}
	if ws, err := term.GetWinsize(fd); err == nil && ws.Width > 0 {
		st.Width = int(ws.Width)
	}
	return st
}
