package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// table is a kubectl-style table: upper-case headers, no borders, columns
// separated by three spaces, left-aligned cells. Every cell is escaped
// (EscapeCell) and then styled by its column's styler as it is appended,
// so colour never has to be found again in rendered text; the layout
// measures cells by display width, ANSI sequences excluded
// (tablewriter's twwidth).
//
// A table is used by one goroutine.
type table struct {
	w       io.Writer
	buf     bytes.Buffer
	t       *tablewriter.Table
	headers []string
	styles  map[int]func(string) string
}

// newTable starts a table with the given column headers; noHeaders leaves
// the header row out (column widths then follow the rows alone, as
// kubectl's --no-headers).
func newTable(w io.Writer, noHeaders bool, headers ...string) *table {
	tb := &table{w: w, headers: headers}
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
	if !noHeaders {
		up := make([]string, len(headers))
		for i, h := range headers {
			up[i] = EscapeCell(strings.ToUpper(h))
		}
		tb.t.Header(up)
	}
	return tb
}

// style has the cells of the column named header written through fn
// (after escaping); a nil fn or an unknown header styles nothing.
func (t *table) style(header string, fn func(string) string) {
	if fn == nil {
		return
	}
	for i, h := range t.headers {
		if h == header {
			if t.styles == nil {
				t.styles = map[int]func(string) string{}
			}
			t.styles[i] = fn
		}
	}
}

// append adds one row; missing trailing cells are left empty.
func (t *table) append(cells ...string) error {
	row := make([]string, len(cells))
	for i, c := range cells {
		row[i] = EscapeCell(c)
		if fn := t.styles[i]; fn != nil {
			row[i] = fn(row[i])
		}
	}
	return t.t.Append(row)
}

// render writes the table, with trailing blanks trimmed from every line so
// output and golden files carry no invisible padding.
func (t *table) render() error {
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
