// Package report renders the results of the engines (analysis, metrics,
// replay) as a kubectl-style table, a wide table, JSON or YAML.
//
// Every renderer takes an io.Writer and a Format; none of them prints
// anywhere else. The JSON and YAML forms are a contract for scripts: field
// names documented on the report types do not change within an apiVersion.
package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"sigs.k8s.io/yaml"
)

// Format selects how a report is written.
type Format string

// The output formats every command accepts with -o/--output.
const (
	FormatTable Format = "table"
	FormatWide  Format = "wide"
	FormatJSON  Format = "json"
	FormatYAML  Format = "yaml"
)

// Formats lists the accepted formats in the order help texts show them.
func Formats() []Format { return []Format{FormatTable, FormatWide, FormatJSON, FormatYAML} }

// UnsupportedFormatError is a format name ParseFormat does not know. The
// CLI names its flag.
type UnsupportedFormatError struct{ Value string }

func (e *UnsupportedFormatError) Error() string {
	return fmt.Sprintf("unsupported output format %q: use one of %s", e.Value, strings.Join(FormatNames(), ", "))
}

// FormatNames lists the names of Formats.
func FormatNames() []string {
	names := make([]string, 0, 4)
	for _, f := range Formats() {
		names = append(names, string(f))
	}
	return names
}

// ParseFormat turns a user's format name into a Format. The empty string
// means the default, table; an unknown name is an *UnsupportedFormatError.
func ParseFormat(s string) (Format, error) {
	if s == "" {
		return FormatTable, nil
	}
	for _, f := range Formats() {
		if strings.EqualFold(s, string(f)) {
			return f, nil
		}
	}
	return "", &UnsupportedFormatError{Value: s}
}

// Structured reports whether the format is machine-readable (JSON or YAML).
// Commands keep stderr progress quiet for structured output unless verbose.
func (f Format) Structured() bool { return f == FormatJSON || f == FormatYAML }

// writeStructured encodes v as indented JSON or as YAML. YAML goes through
// JSON first (sigs.k8s.io/yaml), so both forms use the same field names.
func writeStructured(w io.Writer, v any, f Format) error {
	switch f {
	case FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	case FormatYAML:
		b, err := yaml.Marshal(v)
		if err != nil {
			return fmt.Errorf("encoding yaml: %w", err)
		}
		_, err = w.Write(b)
		return err
	default:
		return fmt.Errorf("format %q is not a structured format", f)
	}
}

// WriteStructured is writeStructured for renderers outside this package's
// report types (kept exported so every command encodes the same way).
func WriteStructured(w io.Writer, v any, f Format) error { return writeStructured(w, v, f) }

// Table is a kubectl-style table: upper-case headers, no borders, columns
// separated by three spaces, left-aligned cells.
type Table struct {
	w   io.Writer
	buf bytes.Buffer
	t   *tablewriter.Table
}

// NewTable starts a table with the given column headers.
func NewTable(w io.Writer, headers ...string) *Table {
	tb := &Table{w: w}
	tb.t = tablewriter.NewTable(&tb.buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: tw.NewSymbols(tw.StyleNone),
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenRows: tw.Off, BetweenColumns: tw.Off},
				Lines:      tw.Lines{ShowHeaderLine: tw.Off, ShowTop: tw.Off, ShowBottom: tw.Off},
			},
		})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithPadding(tw.Padding{Left: "", Right: "   ", Overwrite: true}),
		tablewriter.WithTrimSpace(tw.Off),
	)
	up := make([]string, len(headers))
	for i, h := range headers {
		up[i] = strings.ToUpper(h)
	}
	tb.t.Header(up)
	return tb
}

// Append adds one row; missing trailing cells are left empty.
func (t *Table) Append(cells ...string) error {
	for i, c := range cells {
		cells[i] = Escape(c)
	}
	return t.t.Append(cells)
}

// Render writes the table, with trailing blanks trimmed from every line so
// output and golden files carry no invisible padding.
func (t *Table) Render() error {
	if err := t.t.Render(); err != nil {
		return fmt.Errorf("rendering table: %w", err)
	}
	for _, line := range strings.SplitAfter(t.buf.String(), "\n") {
		if line == "" {
			continue
		}
		trimmed := strings.TrimRight(line, " \t\n")
		if _, err := io.WriteString(t.w, trimmed+"\n"); err != nil {
			return err
		}
	}
	return nil
}
