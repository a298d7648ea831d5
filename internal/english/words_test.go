package english

import "testing"

func TestParen(t *testing.T) {
	for _, tc := range []struct{ word, want string }{{"--interval", " (--interval)"}, {"", ""}} {
		if got := Paren(tc.word); got != tc.want {
			t.Errorf("Paren(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
}
