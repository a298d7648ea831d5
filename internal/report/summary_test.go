package report

import (
	"fmt"
	"strings"
	"testing"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// TestSummaryLineNamesEveryType: the summary line names the findings of
// each type of api.FindingTypes by its row's words, one and many.
func TestSummaryLineNamesEveryType(t *testing.T) {
	for _, row := range api.FindingTypes() {
		for _, n := range []int{1, 2} {
			r := &api.Report{APIServers: []api.APIServer{{Name: "a", DumpFormat: "debug=2"}}}
			*row.Count(&r.Summary) = n
			want := fmt.Sprintf("%d %s", n, row.One)
			if n > 1 {
				want = fmt.Sprintf("%d %s", n, row.Many)
			}
			if got := summaryLine(r); !strings.Contains(got, want) {
				t.Errorf("%s: summary line %q does not say %q", row.Type, got, want)
			}
		}
	}
}

// TestACappedCountIsALowerBound: the stuck watches of an incomplete report
// (a trace past the parser's goroutine cap: 20000 kept of 50000) are said
// as a lower bound; a complete report's are said as they are.
func TestACappedCountIsALowerBound(t *testing.T) {
	r := &api.Report{APIServers: []api.APIServer{{Name: "a", DumpFormat: "trace"}}, Summary: api.Summary{StuckWatches: 20000, StuckGoroutines: 20000}}
	if got, want := summaryLine(r), "Summary: 20000 watches stuck"; !strings.HasPrefix(got, want) {
		t.Errorf("complete: %q, want it to start %q", got, want)
	}
	r.Incomplete = []string{"a: the trace holds at least 50000 watch-path goroutines: the parser keeps 20000, so every count from the trace is a lower bound"}
	if got, want := summaryLine(r), "Summary: at least 20000 watches stuck"; !strings.HasPrefix(got, want) {
		t.Errorf("incomplete: %q, want it to start %q", got, want)
	}
}
