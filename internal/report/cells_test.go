package report

import (
	"testing"
)

func TestCellTexts(t *testing.T) {
	zero, five := 0, 5
	half := 0.5
	for _, tc := range []struct{ name, got, want string }{
		{"blocked unknown", blockedText(nil), "?"},
		{"blocked under a minute", blockedText(&zero), "<1m"},
		{"blocked", blockedText(&five), ">=5m"},
		{"float absent", floatText(nil), "-"},
		{"float", floatText(&half), "0.5"},
		{"id absent", idText(0), ""},
		{"id", idText(42), "42"},
		{"ids", joinIDs([]int64{1, 22, 333}), "1,22,333"},
		{"ids none", joinIDs(nil), ""},
		{"ids abbreviated", idsAbbrev([]int64{1, 2, 3, 4}, 2), "1,2 and 2 more"},
		{"ids all", idsAbbrev([]int64{1, 2}, 2), "1,2"},
		{"dash", orDash(""), "-"},
		{"no dash", orDash("x"), "x"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}
