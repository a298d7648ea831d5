package report

import "testing"

func TestEscape(t *testing.T) {
	tests := []struct{ in, text, cell string }{
		{"slow-informer", "slow-informer", "slow-informer"},
		{"a\tb\nc", `a\tb` + "\nc", `a\tb\nc`},
		{"x\x1b[2Jy", `x\x1b[2Jy`, `x\x1b[2Jy`},
		{"bell\x07", `bell\x07`, `bell\x07`},
		{"del\x7f", `del\x7f`, `del\x7f`},
		{"c1\u009b31m", `c1\u009b31m`, `c1\u009b31m`},
		{"bad\xffutf8", `bad\xffutf8`, `bad\xffutf8`},
		{"héllo ✓", "héllo ✓", "héllo ✓"},
		{"admin\u202egnp.exe", `admin\u202egnp.exe`, `admin\u202egnp.exe`},
		{"\u2066isolate\u2069 \u200fmark", `\u2066isolate\u2069 \u200fmark`, `\u2066isolate\u2069 \u200fmark`},
		{"ünïcode\ttab", `ünïcode\ttab`, `ünïcode\ttab`},
	}
	for _, tc := range tests {
		if got := Escape(tc.in); got != tc.text {
			t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.text)
		}
		if got := EscapeCell(tc.in); got != tc.cell {
			t.Errorf("EscapeCell(%q) = %q, want %q", tc.in, got, tc.cell)
		}
	}
}
