package report

import (
	"fmt"
	"io"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/metrics"
)

// Options says how documents are printed. The zero Options print a plain
// table, as for a pipe or a file.
type Options struct {
	// Format is table (the default), wide, json or yaml.
	Format Format
	// NoHeaders prints, in table and wide, the rows of the document's main
	// table alone (findings; a metrics report's resources; a replay's
	// clients; the scenarios), without the header row or anything else:
	// every finding has its row, none is grouped.
	NoHeaders bool
	// Color puts the severity cells in colour (red critical, yellow
	// warning) in table and wide.
	Color bool
	// Width, when positive, wraps list lines (advice, warnings, evidence)
	// to that many terminal columns.
	Width int
	// Terminal is set when the output is a terminal: the template forms
	// then escape what came from outside (outside.go).
	Terminal bool
}

// Printer writes one document. The documents are *api.Report,
// *api.FleetReport, metrics.Report, *api.Replay and ScenarioList; a
// structured printer (json, yaml) also encodes any other value.
type Printer interface {
	Print(w io.Writer, doc any) error
}

// New returns the printer of o. An unknown format is an
// *UnsupportedFormatError.
func New(o Options) (Printer, error) {
	if o.Format == "" {
		o.Format = FormatTable
	}
	switch o.Format {
	case FormatJSON, FormatYAML:
		return structuredPrinter{o.Format}, nil
	case FormatTable, FormatWide:
		return textPrinter{o}, nil
	}
	return nil, &UnsupportedFormatError{Value: string(o.Format)}
}

// Print is New(o) then Print(w, doc).
func Print(w io.Writer, doc any, o Options) error {
	p, err := New(o)
	if err != nil {
		return err
	}
	return p.Print(w, doc)
}

// UnsupportedDocumentError is a document a printer has no form for.
type UnsupportedDocumentError struct{ Doc any }

func (e *UnsupportedDocumentError) Error() string {
	return fmt.Sprintf("no printer for a document of type %T", e.Doc)
}

// structuredPrinter writes JSON or YAML.
type structuredPrinter struct{ f Format }

func (p structuredPrinter) Print(w io.Writer, doc any) error {
	switch d := doc.(type) {
	case *api.Report:
		if p.f == FormatJSON {
			js := &jsonSafe{w: w}
			if err := writeReportJSON(js, d); err != nil {
				return err
			}
			return js.flush()
		}
	case metrics.Report:
		doc = d.Document()
	case *metrics.Report:
		doc = d.Document()
	}
	return writeStructured(w, doc, p.f)
}

// textPrinter writes table and wide.
type textPrinter struct{ o Options }

func (p textPrinter) Print(w io.Writer, doc any) error {
	t := newText(w, p.o)
	var err error
	switch d := doc.(type) {
	case *api.Report:
		err = printReport(t, d)
	case *api.FleetReport:
		err = printFleet(t, d)
	case metrics.Report:
		err = printMetrics(t, d)
	case *metrics.Report:
		err = printMetrics(t, *d)
	case *api.Replay:
		err = printReplay(t, d)
	case ScenarioList:
		err = printScenarios(t, d)
	default:
		return &UnsupportedDocumentError{Doc: doc}
	}
	if err != nil {
		return err
	}
	return t.raw.err
}

func (o Options) wide() bool { return o.Format == FormatWide }

// ScenarioInfo is one row of the replay's scenario list.
type ScenarioInfo struct {
	Name        string `json:"name"`
	Duration    string `json:"duration"`
	Clients     int    `json:"clients"`
	Description string `json:"description"`
}

// ScenarioList is the document of `replay --list`: the built-in scenarios.
type ScenarioList []ScenarioInfo

func printScenarios(t *text, l ScenarioList) error {
	tb := t.table(t.opts.NoHeaders, "scenario", "duration", "clients", "description")
	for _, r := range l {
		if err := tb.append(r.Name, r.Duration, fmt.Sprint(r.Clients), r.Description); err != nil {
			return err
		}
	}
	return tb.render()
}
