package english

import "testing"

func TestCount(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{0, "0 watches"}, {1, "1 watch"}, {2, "2 watches"}, {-1, "-1 watches"}} {
		if got := Count(tc.n, "watch", "watches"); got != tc.want {
			t.Errorf("Count(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestNumber(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want string
	}{{743, "743"}, {2.5, "2.5"}, {0, "0"}, {2.25, "2.2"}, {1e6, "1000000"}, {-3, "-3"}} {
		if got := Number(tc.f); got != tc.want {
			t.Errorf("Number(%v) = %q, want %q", tc.f, got, tc.want)
		}
	}
}
