package report

import (
	"bytes"
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
