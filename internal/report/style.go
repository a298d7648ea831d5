package report

import (
	"bytes"
	"io"
	"strings"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// Style is how text output is laid out for a terminal: Color puts the
// severity of each finding in colour (red critical, yellow warning); Width,
// when positive, wraps advice and warning lines to that many columns.
// The zero Style is plain text, as for a pipe or a file.
type Style struct {
	Color bool
	Width int
}

const (
	ansiRed    = "\x1b[31m"
	ansiYellow = "\x1b[33m"
	ansiReset  = "\x1b[0m"
)

// RenderReportStyled is RenderReport with st applied to table and wide
// output (JSON and YAML are never styled).
func RenderReportStyled(w io.Writer, r *api.Report, f Format, st Style) error {
	if f.Structured() || st == (Style{}) {
		return RenderReport(w, r, f)
	}
	var buf bytes.Buffer
	if err := RenderReport(&buf, r, f); err != nil {
		return err
	}
	_, err := io.WriteString(w, st.apply(buf.String()))
	return err
}

// apply colours the severity cells of the findings table (after layout,
// so alignment holds: escapes take no columns) and wraps list lines.
func (st Style) apply(text string) string {
	lines := strings.Split(text, "\n")
	var out []string
	inFindings := len(lines) > 0 && (strings.HasPrefix(lines[0], "FINDING ") || strings.HasPrefix(lines[0], "APISERVER ") || strings.HasPrefix(lines[0], "CLUSTER "))
	for i, l := range lines {
		if l == "" {
			inFindings = false
		}
		if inFindings && i > 0 && st.Color {
			l = colorSeverity(l)
		}
		if st.Width > 0 && strings.HasPrefix(l, "  - ") && len(l) > st.Width {
			out = append(out, wrap(l, st.Width, "    ")...)
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

func colorSeverity(row string) string {
	for s, color := range map[api.Severity]string{api.SeverityCritical: ansiRed, api.SeverityWarning: ansiYellow} {
		sev := string(s)
		token := "   " + sev + "   "
		if i := strings.Index(row, token); i >= 0 {
			return row[:i+3] + color + sev + ansiReset + row[i+3+len(sev):]
		}
	}
	return row
}

// wrap breaks line at spaces so that no piece exceeds width (a word
// longer than width stays whole); continuation lines get indent.
func wrap(line string, width int, indent string) []string {
	words := strings.Fields(line[len("  - "):])
	var out []string
	cur := "  -"
	for _, w := range words {
		if len(cur)+1+len(w) > width && strings.TrimSpace(cur) != "-" && strings.TrimSpace(cur) != "" {
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
