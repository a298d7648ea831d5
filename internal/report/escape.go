package report

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape makes s safe for a terminal: control characters other than
// newline and tab (ESC, BEL, C1 controls, DEL) and invalid UTF-8 become
// visible escapes (\x1b, \u009b), as kubectl does before printing text a
// server chose. Function and user names in dumps come from the server.
func Escape(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x80 && unicode.IsControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.IsControl(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func needsEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f || c >= 0x80 {
			if c >= 0x80 {
				// Valid non-control UTF-8 is fine; check the slow way.
				for _, r := range s[i:] {
					if r == utf8.RuneError || unicode.IsControl(r) && r != '\n' && r != '\t' {
						return true
					}
				}
				return false
			}
			return true
		}
	}
	return false
}

// escapeWriter escapes what is written through it (text output only:
// JSON and YAML escape by themselves). Writes must not split a rune,
// which holds for the line-at-a-time writes of the renderers.
type escapeWriter struct{ w io.Writer }

func (e escapeWriter) Write(p []byte) (int, error) {
	s := string(p)
	if !needsEscape(s) {
		return e.w.Write(p)
	}
	if _, err := io.WriteString(e.w, Escape(s)); err != nil {
		return 0, err
	}
	return len(p), nil
}
