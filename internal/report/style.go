package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/mattn/go-runewidth"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

const (
	ansiRed    = "\x1b[31m"
	ansiYellow = "\x1b[33m"
	ansiReset  = "\x1b[0m"
)

// severityColors are the colours of Options.Color: red critical, yellow
// warning; info stays plain.
var severityColors = map[string]string{
	string(api.SeverityCritical): ansiRed,
	string(api.SeverityWarning):  ansiYellow,
}

// colorSeverity is the styler of a SEVERITY column.
func colorSeverity(cell string) string {
	if c, ok := severityColors[cell]; ok {
		return c + cell + ansiReset
	}
	return cell
}

// text is where a table or wide document is written. Prose goes through
// Escape (tabs escaped, newlines kept); tables write their own escaped and styled cells; list items are
// wrapped to Options.Width by display width. The first write error is
// kept (err) so a printer checks once.
//
// A text is used by one goroutine.
type text struct {
	raw  *errWriter
	opts Options
}

func newText(w io.Writer, o Options) *text { return &text{raw: &errWriter{w: w}, opts: o} }

// Write escapes p (it must not split a rune: the printer writes whole
// lines and fields).
func (t *text) Write(p []byte) (int, error) { return escapeWriter{t.raw}.Write(p) }

func (t *text) printf(format string, args ...any) { fmt.Fprintf(t, format, args...) }

func (t *text) println(args ...any) { fmt.Fprintln(t, args...) }

// item writes one list line "  - s" (s escaped), wrapped at spaces to
// the width with a hanging indent when a width is set.
func (t *text) item(format string, args ...any) {
	s := Escape(fmt.Sprintf("  - "+format, args...))
	for _, line := range strings.Split(s, "\n") {
		if t.opts.Width > 0 && strings.HasPrefix(line, "  - ") && runewidth.StringWidth(line) > t.opts.Width {
			io.WriteString(t.raw, strings.Join(wrap(line, t.opts.Width, "    "), "\n")+"\n")
			continue
		}
		io.WriteString(t.raw, line+"\n")
	}
}

// table starts a table written to t: its severity column coloured under
// Options.Color, its header row left out under noHeaders.
func (t *text) table(noHeaders bool, headers ...string) *table {
	tb := newTable(t.raw, noHeaders, headers...)
	if t.opts.Color {
		tb.style("severity", colorSeverity)
	}
	return tb
}

// wrap breaks a list line "  - ..." at spaces so that no piece is wider
// than width columns on a terminal (a word wider than width stays whole);
// continuation lines get indent.
func wrap(line string, width int, indent string) []string {
	words := strings.Fields(line[len("  - "):])
	var out []string
	cur := "  -"
	for _, w := range words {
		if runewidth.StringWidth(cur)+1+runewidth.StringWidth(w) > width && strings.TrimSpace(cur) != "-" && strings.TrimSpace(cur) != "" {
			out = append(out, cur)
			cur = indent + w
			continue
		}
		if cur == indent || strings.HasSuffix(cur, " ") {
			cur += w
		} else {
			cur += " " + w
		}
	}
	return append(out, cur)
}
