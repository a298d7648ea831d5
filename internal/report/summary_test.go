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
	for _, row := range api.FindingTypes {
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
