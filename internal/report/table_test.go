package report

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTable: kubectl's layout (upper-case headers, three spaces between
// columns, no trailing blanks), every cell escaped before its column's
// styler sees it, and --no-headers sizing columns by the rows alone.
func TestTable(t *testing.T) {
	bracket := func(s string) string { return "[" + s + "]" }
	for _, tc := range []struct {
		name      string
		noHeaders bool
		style     string
		rows      [][]string
		want      string
	}{
		{
			name: "layout",
			rows: [][]string{{"slow-informer", "3"}, {"a", ""}},
			want: "CLIENT          SEATS\nslow-informer   3\na\n",
		},
		{
			name: "escaped before styled", style: "seats",
			rows: [][]string{{"evil\x1b[2J", "1\t2"}},
			want: "CLIENT        SEATS\nevil\\x1b[2J   [1\\t2]\n",
		},
		{
			name: "unknown column styles nothing", style: "nope",
			rows: [][]string{{"a", "1"}},
			want: "CLIENT   SEATS\na        1\n",
		},
		{
			name: "no headers", noHeaders: true,
			rows: [][]string{{"a", "1"}},
			want: "a   1\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			tb := newTable(&b, tc.noHeaders, "client", "seats")
			tb.style(tc.style, bracket)
			tb.style("client", nil)
			for _, r := range tc.rows {
				if err := tb.append(r...); err != nil {
					t.Fatal(err)
				}
			}
			if err := tb.render(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, b.String()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
