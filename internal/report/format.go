// Package report prints the documents of the engines (a diagnosis, a
// fleet report, watch metrics, a replay, the scenario list) as a
// kubectl-style table, a wide table, JSON or YAML.
//
// There is one printer, chosen once from Options (New), as kubectl's
// PrintFlags.ToPrinter and pprof's report.Generate: Print(w, doc)
// dispatches on the document's type and writes to w alone. The JSON and
// YAML forms are a contract for scripts: field names documented on the
// report types do not change within an apiVersion.
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
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
// JSON first (writeYAML), so both forms use the same field names and values.
func writeStructured(w io.Writer, v any, f Format) error {
	switch f {
	case FormatJSON:
		js := &jsonSafe{w: w}
		enc := json.NewEncoder(js)
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			return err
		}
		return js.flush()
	case FormatYAML:
		if err := writeYAML(w, v); err != nil {
			return fmt.Errorf("encoding yaml: %w", err)
		}
		return nil
	default:
		return fmt.Errorf("format %q is not a structured format", f)
	}
}
