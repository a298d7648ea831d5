package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// storm is the report of n watches initializing at once, as after an API
// server restart: n findings alike but for their goroutines, each
// ambiguous among the same candidates.
func storm(n int) *api.Report {
	five := 5
	r := &api.Report{APIVersion: api.GroupVersion, Kind: api.KindReport, APIServers: []api.APIServer{{Name: "a", DumpFormat: "debug=2", Watchers: n}}}
	for i := range n {
		id := int64(1000 + 4*i)
		r.Findings = append(r.Findings, api.Finding{Type: api.StuckInitialEvents, Severity: api.SeverityCritical, APIServer: "a", BlockedMinutes: &five,
			Phase: "initial", GoroutineIDs: []int64{id, id + 1, id + 2}, Watcher: api.Watcher{GoroutineID: id},
			Client:     &api.Client{Verb: "watch", Path: "/api/v1/pods", Match: api.MatchAmbiguous},
			Candidates: []api.Request{{User: "kubelet", Verb: "watch", Path: "/api/v1/pods"}, {User: "operator", Verb: "watch", Path: "/api/v1/pods"}}})
	}
	r.Summary.StuckWatches = n
	return r
}

// TestRelistStormReadsAsOne: the table of a 50,000-watch storm is a few
// lines, its identical rows one row with a COUNT; -o wide, --no-headers
// and JSON keep every finding.
func TestRelistStormReadsAsOne(t *testing.T) {
	const n = 50_000
	r := storm(n)
	var table bytes.Buffer
	if err := Print(&table, r, Options{}); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(table.String(), "\n"); lines > 36 {
		t.Errorf("the table of a %d-watch storm has %d lines, want at most 36:\n%.2000s", n, lines, table.String())
	}
	for _, want := range []string{
		"COUNT   FINDING              SEVERITY   CLIENT",
		"\n50000   StuckInitialEvents   critical   kubelet | operator   watch /api/v1/pods",
		"\n(50000 findings in 1 row: COUNT says how many are identical; -o wide or -o json lists each)\n",
		"\n  StuckInitialEvents goroutines 1000,1004,1008 and 49997 more: one of these is each one's request: kubelet (watch /api/v1/pods",
	} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("the table lacks %q:\n%.2000s", want, table.String())
		}
	}
	// The forms that list each finding, on a smaller storm (tablewriter
	// lays out 50,000 wide rows in seconds).
	small := storm(1000)
	for _, o := range []Options{{Format: FormatWide}, {NoHeaders: true}} {
		var b bytes.Buffer
		if err := Print(&b, small, o); err != nil {
			t.Fatal(err)
		}
		if rows := strings.Count("\n"+b.String(), "\nStuckInitialEvents   critical"); rows != len(small.Findings) {
			t.Errorf("%+v: %d rows, want one per finding, %d", o, rows, len(small.Findings))
		}
	}
	var js bytes.Buffer
	if err := Print(&js, small, Options{Format: FormatJSON}); err != nil {
		t.Fatal(err)
	}
	var got api.Report
	if err := json.Unmarshal(js.Bytes(), &got); err != nil || len(got.Findings) != len(small.Findings) {
		t.Errorf("JSON: %d findings (%v), want %d", len(got.Findings), err, len(small.Findings))
	}
}

func TestGroupRows(t *testing.T) {
	a, b, c := []string{"a"}, []string{"b"}, []string{"c"}
	tests := []struct {
		name   string
		rows   [][]string
		want   [][]string
		counts []int
	}{
		{"none alike", [][]string{a, b, c}, [][]string{a, b, c}, nil},
		{"fewer than groupAtLeast alike", [][]string{a, b, a, a, a}, [][]string{a, b, a, a, a}, nil},
		{"a storm among others, where it began", [][]string{b, a, c, a, a, a, a, b}, [][]string{b, a, c, b}, []int{1, 5, 1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, counts := groupRows(tt.rows)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.counts, counts); diff != "" {
				t.Errorf("counts (-want +got):\n%s", diff)
			}
		})
	}
}
