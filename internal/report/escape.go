package report

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape makes s safe for a terminal: control characters other than
// newline (tab, ESC, BEL, C1 controls, DEL), the bidirectional formatting
// characters that reorder what follows them (U+202A..U+202E,
// U+2066..U+2069, U+200E, U+200F, U+061C) and invalid UTF-8 become visible
// escapes (\t, \x1b, \u009b, \u202e), as kubectl does before printing text
// a server chose. Function and user names in dumps come from the server,
// and so do the messages of its error answers.
//
// Text is escaped where it is written, never where it is read: the
// values keep the server's bytes (JSON and YAML carry them without loss,
// outside.go), and what reaches a terminal goes through Escape (the
// printer's prose, stderr's messages, warnings and errors, progress
// lines) or EscapeCell (one cell or field of a line).
func Escape(s string) string { return escape(s, keepNewline) }

// EscapeCell is Escape for one table cell or one field of a line: a
// newline is escaped too (\n), so a value can neither start a row of its
// own nor, with its tabs escaped, shift the columns after it.
func EscapeCell(s string) string { return escape(s, 0) }

type keep int

const keepNewline keep = 1

func escape(s string, k keep) string {
	if !needsEscape(s, k) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' && k&keepNewline != 0:
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80 && unicode.IsControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.IsControl(r) || isBidi(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// isBidi reports the characters that change the display order of the
// text around them (Unicode's explicit directional formatting characters
// and marks, UAX #9 table 1), so that a name can look like another.
func isBidi(r rune) bool {
	return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x200e || r == 0x200f || r == 0x061c
}

func needsEscape(s string, k keep) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 0x80:
			// Valid non-control UTF-8 is fine; check the slow way.
			for _, r := range s[i:] {
				if r == utf8.RuneError || isBidi(r) || unicode.IsControl(r) && !kept(r, k) {
					return true
				}
			}
			return false
		case kept(rune(c), k):
		case c < 0x20 || c == 0x7f:
			return true
		}
	}
	return false
}

func kept(r rune, k keep) bool {
	return r == '\n' && k&keepNewline != 0
}

// escapeWriter escapes what is written through it with Escape (text
// output only: JSON and YAML escape by themselves). Writes must not split
// a rune, which holds for the line-at-a-time writes of the printer.
type escapeWriter struct{ w io.Writer }

func (e escapeWriter) Write(p []byte) (int, error) {
	s := string(p)
	if !needsEscape(s, keepNewline) {
		return e.w.Write(p)
	}
	if _, err := io.WriteString(e.w, Escape(s)); err != nil {
		return 0, err
	}
	return len(p), nil
}
