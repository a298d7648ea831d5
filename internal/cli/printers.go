package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/moby/term"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/watch-doctor/watch-doctor/internal/bounded"
	"github.com/watch-doctor/watch-doctor/internal/report"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/metrics"
)

// Output forms beyond report.Formats(), as kubectl spells them: -o name, and
// templates through cli-runtime's printers.
const (
	outputName       = "name"
	templatePrefixes = "jsonpath=, jsonpath-file=, go-template=, go-template-file="
)

// printer is the one printer a command resolves in Complete from -o and
// --no-headers, as kubectl's PrintFlags.ToPrinter: internal/report's for
// table, wide, json and yaml; -o name and the templates here, behind the
// same report.Printer interface. Run only calls Print.
type printer struct {
	report.Printer
	// opts are the resolved options; Format is empty for name and
	// templates.
	opts report.Options
}

// Structured reports whether the output is JSON or YAML: commands keep
// stderr progress quiet for it unless verbose.
func (p printer) Structured() bool { return p.opts.Format.Structured() }

// addReportOutputFlag is addOutputFlag for the commands that write a
// diagnosis (analyze, diagnose): it also takes name, jsonpath= and
// go-template=.
func addReportOutputFlag(cmd *cobra.Command, p *string, noHeaders *bool) {
	addOutputFlag(cmd, p, noHeaders)
	f := cmd.Flags().Lookup("output")
	f.Usage += ", name, " + templatePrefixes + "TEMPLATE"
}

// addNoHeadersFlag is --no-headers, which every command that prints a
// table has.
func addNoHeadersFlag(cmd *cobra.Command, p *bool) {
	cmd.Flags().BoolVar(p, "no-headers", *p, "with -o table|wide: print the rows of the main table only (findings, resources, clients or scenarios), without headers or anything else")
}

// toPrinter resolves -o (report formats; with extended, also name and
// templates) and --no-headers into the printer of a command writing to
// out: colour and wrapping when out is a terminal. A bad template fails
// here, before any cluster is read.
func toPrinter(out io.Writer, output string, noHeaders, extended bool) (printer, error) {
	if extended && output == outputName {
		return printer{Printer: namePrinter{}}, nil
	}
	if extended && isTemplateOutput(output) {
		p, err := templatePrinter(output)
		if err != nil {
			return printer{}, err
		}
		// Raw into a pipe, as kubectl prints templates; escaped on a
		// terminal (internal/report outside.go decides every form).
		p.terminal = terminalOptions(out).Terminal
		return printer{Printer: p}, nil
	}
	f, err := parseFormat(output)
	if err != nil {
		if extended {
			err = fmt.Errorf("%w, name, %sTEMPLATE", err, templatePrefixes)
		}
		return printer{}, err
	}
	if noHeaders && f.Structured() {
		return printer{}, fmt.Errorf("--no-headers applies to -o table|wide, not -o %s", output)
	}
	o := terminalOptions(out)
	o.Format, o.NoHeaders = f, noHeaders
	p, err := report.New(o)
	return printer{Printer: p, opts: o}, err
}

func isTemplateOutput(s string) bool {
	for _, p := range strings.Split(templatePrefixes, ", ") {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// maxTemplateBytes bounds a -o jsonpath-file= or go-template-file= read:
// kubectl's own templates are a few hundred bytes; a path pointing at a
// device or a huge file is refused, naming it, instead of read whole.
const maxTemplateBytes = 1 << 20

// readTemplateFile reads a template file, bounded by maxTemplateBytes.
func readTemplateFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return bounded.ReadAll(f, maxTemplateBytes, path, "a template")
}

// templatePrinter builds cli-runtime's printer for a template -o value.
func templatePrinter(s string) (objectPrinter, error) {
	kind, tmpl, _ := strings.Cut(s, "=")
	if strings.HasSuffix(kind, "-file") {
		b, err := readTemplateFile(tmpl)
		if err != nil {
			return objectPrinter{}, fmt.Errorf("invalid -o %s: %w", kind, err)
		}
		tmpl, kind = string(b), strings.TrimSuffix(kind, "-file")
	}
	if tmpl == "" {
		return objectPrinter{}, fmt.Errorf("invalid -o %s=: the template is empty", kind)
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
		return objectPrinter{}, fmt.Errorf("invalid -o %s template %q: %w", kind, tmpl, err)
	}
	return objectPrinter{p: p}, nil
}

// objectPrinter runs a template printer over a document (any
// JSON-marshalable one), as kubectl does over an object. It prints what
// the template selects as the data holds it, as kubectl does: it is for
// programs. On a terminal (terminal set) every string of the data is
// escaped first (report.EscapeCell), the template's own text kept.
type objectPrinter struct {
	p        printers.ResourcePrinter
	terminal bool
}

func (o objectPrinter) Print(w io.Writer, doc any) error {
	if m, ok := doc.(metrics.Report); ok {
		doc = m.Document()
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	obj := &unstructured.Unstructured{}
	if err := json.Unmarshal(b, &obj.Object); err != nil {
		return err
	}
	if o.terminal {
		obj.Object, _ = report.EscapeValues(obj.Object, report.EscapeCell).(map[string]any)
	}
	return o.p.PrintObj(obj, w)
}

// namePrinter is -o name: as kubectl prints a KIND/NAME line per object,
// one TYPE/CLIENT line per finding, then one group/TYPE/CLIENT line per
// group of findings alike (Report.Groups), whose members keep their own
// lines; a fleet's lines are each cluster's, led by CONTEXT/. Each part
// is escaped.
type namePrinter struct{}

// groupKind is the KIND of a group's -o name line: in lower case, so that
// no finding type (upper camel case) reads as it.
const groupKind = "group"

func (namePrinter) Print(w io.Writer, doc any) error {
	var b strings.Builder
	switch d := doc.(type) {
	case *api.Report:
		writeNames(&b, "", d)
	case *api.FleetReport:
		for _, c := range d.Clusters {
			if c.Report != nil {
				writeNames(&b, report.EscapeCell(c.Context)+"/", c.Report)
			}
		}
	default:
		return &report.UnsupportedDocumentError{Doc: doc}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeNames writes the -o name lines of r, each led by prefix.
func writeNames(b *strings.Builder, prefix string, r *api.Report) {
	for _, fd := range r.Findings {
		fmt.Fprintf(b, "%s%s/%s\n", prefix, fd.Type, report.EscapeCell(fd.ClientLabel()))
	}
	for _, g := range r.Groups {
		fmt.Fprintf(b, "%s%s/%s/%s\n", prefix, groupKind, g.Type, report.EscapeCell(g.Client))
	}
}

// terminalOptions styles output for w when it is a terminal: colour
// unless NO_COLOR (or TERM=dumb), and list lines wrapped to its width.
func terminalOptions(w io.Writer) report.Options {
	fd, isTerm := term.GetFdInfo(w)
	if !isTerm {
		return report.Options{}
	}
	o := report.Options{Color: printers.AllowsColorOutput(w), Terminal: true}
	if ws, err := term.GetWinsize(fd); err == nil && ws.Width > 0 {
		o.Width = int(ws.Width)
	}
	return o
}
