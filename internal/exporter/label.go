package exporter

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxLabelBytes bounds a label value read from a server (a user name, a
// resource, a priority level): they come from servers we do not control.
const MaxLabelBytes = 128

// Label returns s fit for a label value: invalid UTF-8 bytes as \xNN,
// control and format characters (newlines, bidi overrides) as \uNNNN,
// cut at MaxLabelBytes on a character boundary with a trailing "...". The
// exposition format escapes quotes and backslashes itself.
func Label(s string) string {
	if len(s) <= MaxLabelBytes && printable(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		var piece string
		switch {
		case r == utf8.RuneError && size == 1:
			piece = fmt.Sprintf(`\x%02x`, s[i])
		case !unicode.IsPrint(r) && r != ' ':
			piece = fmt.Sprintf(`\u%04x`, r)
		default:
			piece = s[i : i+size]
		}
		if b.Len()+len(piece) > MaxLabelBytes-len("...") {
			b.WriteString("...")
			return b.String()
		}
		b.WriteString(piece)
		i += size
	}
	return b.String()
}

func printable(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || (!unicode.IsPrint(r) && r != ' ') {
			return false
		}
	}
	return true
}
