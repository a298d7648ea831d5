package exporter

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestLabel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "system:serviceaccount:kube-system:node-controller", "system:serviceaccount:kube-system:node-controller"},
		{"newline and tab", "evil\nuser\t", `evil\u000auser\u0009`},
		{"escape sequence", "\x1b[31mred", `\u001b[31mred`},
		{"invalid utf-8", "a\xffb", `a\xffb`},
		{"bidi override", "abc\u202edef", `abc\u202edef`},
		{"quotes stay (the format escapes them)", `a"b\c`, `a"b\c`},
		{"cut at the bound", strings.Repeat("x", 200), strings.Repeat("x", MaxLabelBytes-3) + "..."},
		{"cut on a character boundary", strings.Repeat("é", 100), strings.Repeat("é", (MaxLabelBytes-3)/2) + "..."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Label(tc.in)); diff != "" {
				t.Errorf("Label(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func FuzzLabel(f *testing.F) {
	for _, s := range []string{"", "user", "a\nb", "\xff\xfe", strings.Repeat("\u202e", 80)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Label(s)
		if len(got) > MaxLabelBytes {
			t.Errorf("Label(%q) is %d bytes, over %d", s, len(got), MaxLabelBytes)
		}
		if !utf8.ValidString(got) {
			t.Errorf("Label(%q) = %q: invalid UTF-8", s, got)
		}
		for _, r := range got {
			if !unicode.IsPrint(r) && r != ' ' {
				t.Errorf("Label(%q) = %q keeps %U", s, got, r)
			}
		}
	})
}
