package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// TestReportJSONStreamsWhatTheEncoderWrites: the streaming writer must
// write the same bytes as encoding the whole report at once.
func TestReportJSONStreamsWhatTheEncoderWrites(t *testing.T) {
	two := 2
	f := api.Finding{Type: api.StuckInitialEvents, Severity: "critical", BlockedMinutes: &two, GoroutineIDs: []int64{1, 2},
		Client: &api.Client{User: "a<b>&c", Match: api.MatchAmbiguous}, Candidates: []api.Request{{User: "x"}, {User: "y"}},
		Evidence: []string{`quote " and \ backslash`, "\n  \"findings\": null"}}
	for _, n := range []int{0, 1, 3} {
		r := &api.Report{APIVersion: api.GroupVersion, Kind: api.KindReport, Findings: []api.Finding{}, Advice: []string{"x"}}
		for range n {
			r.Findings = append(r.Findings, f)
		}
		var want, got bytes.Buffer
		if err := writeStructured(&want, r, FormatJSON); err != nil {
			t.Fatal(err)
		}
		if err := writeReportJSON(&got, r); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want.String(), got.String()); diff != "" {
			t.Errorf("%d findings (-encoder +streamed):\n%s", n, diff)
		}
	}
}

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

// TestClientCell: the CLIENT cell is the finding's ClientLabel; an
// ambiguous finding names its candidates' users, never one of them alone.
func TestClientCell(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    api.Finding
		want string
	}{
		{"matched", api.Finding{Client: &api.Client{User: "kcm", Match: api.MatchExact}}, "kcm"},
		{"no user", api.Finding{Client: &api.Client{Match: api.MatchExact}}, "-"},
		{"ambiguous", api.Finding{Client: &api.Client{Match: api.MatchAmbiguous}, Candidates: []api.Request{{User: "x"}, {User: "y"}, {User: "x"}}}, "x | y"},
		{"too many", api.Finding{Client: &api.Client{Match: api.MatchAmbiguous}}, "? too many candidates"},
		{"ambiguous, user known", api.Finding{Client: &api.Client{User: "kcm", Match: api.MatchAmbiguous}, Candidates: []api.Request{{User: "x"}}}, "kcm"},
		{"unmatched", api.Finding{}, "<unmatched>"},
	} {
		if got := findingRow(tc.f, false, false)[2]; got != tc.want {
			t.Errorf("%s: CLIENT cell = %q, want %q", tc.name, got, tc.want)
		}
	}
}

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
