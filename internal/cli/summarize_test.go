package cli

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSummarize(t *testing.T) {
	refused := func(i int) string { return fmt.Sprintf("10.0.0.%d:6443: connection refused", i) }
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"few", []string{refused(1), refused(2)}, []string{refused(1), refused(2)}},
		{"exactly three", []string{refused(1), refused(2), refused(3)}, []string{refused(1), refused(2), refused(3)}},
		{"five of a kind, one other", []string{refused(1), "forbidden", refused(2), refused(3), refused(4), refused(5)},
			[]string{refused(1), "forbidden", refused(2), refused(3), "and 2 more like it"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, summarize(tc.in)); diff != "" {
				t.Errorf("summarize (-want +got):\n%s", diff)
			}
		})
	}
}
