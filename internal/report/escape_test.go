package report

import "testing"

func TestEscape(t *testing.T) {
	tests := []struct{ in, want string }{
		{"slow-informer", "slow-informer"},
		{"a\tb\nc", "a\tb\nc"},
		{"x\x1b[2Jy", `x\x1b[2Jy`},
		{"bell\x07", `bell\x07`},
		{"del\x7f", `del\x7f`},
		{"c1\u009b31m", `c1\u009b31m`},
		{"bad\xffutf8", `bad\xffutf8`},
		{"héllo ✓", "héllo ✓"},
	}
	for _, tc := range tests {
		if got := Escape(tc.in); got != tc.want {
			t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
