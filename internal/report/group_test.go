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
	r.Groups = []api.FindingGroup{{Type: api.StuckInitialEvents, Severity: api.SeverityCritical, APIServer: "a", Client: "kubelet | operator",
		Verb: "watch", Path: "/api/v1/pods", Phase: "initial", BlockedMinutes: &five, GoroutinesEach: 3, Match: api.MatchAmbiguous, Count: n, Findings: members(0, n)}}
	return r
}

// members are the indices from, from+1, ..., to-1.
func members(from, to int) []int {
	var m []int
	for i := from; i < to; i++ {
		m = append(m, i)
	}
	return m
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

// TestGroupedRows: the rows of a group's members are one row where its
// first member was, counted; the rows of findings in no group stay,
// counted 1; without groups the rows are as they were, uncounted.
func TestGroupedRows(t *testing.T) {
	a, b, c := []string{"a"}, []string{"b"}, []string{"c"}
	tests := []struct {
		name   string
		rows   [][]string
		groups []api.FindingGroup
		want   [][]string
		counts []int
	}{
		{"no groups", [][]string{a, a, a, a, a}, nil, [][]string{a, a, a, a, a}, nil},
		{"a storm among others, where it began", [][]string{b, a, c, a, a, a, a, b}, []api.FindingGroup{{Count: 5, Findings: []int{1, 3, 4, 5, 6}}},
			[][]string{b, a, c, b}, []int{1, 5, 1, 1}},
		{"members out of range ignored", [][]string{a, b}, []api.FindingGroup{{Count: 5, Findings: []int{0, 7}}}, [][]string{a, b}, []int{5, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, counts := groupedRows(tt.rows, tt.groups)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.counts, counts); diff != "" {
				t.Errorf("counts (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGroupsInEveryForm: the groups of the model are what each form
// shows: table merges each into a COUNT row and names its candidates once,
// wide lists each under the details, JSON carries them; a report whose
// identical findings the diagnosis did not group keeps a row per finding.
func TestGroupsInEveryForm(t *testing.T) {
	r := storm(7)
	var wide bytes.Buffer
	if err := Print(&wide, r, Options{Format: FormatWide}); err != nil {
		t.Fatal(err)
	}
	want := "\nGroups of findings alike (one row with a COUNT in -o table):\n  - 7 StuckInitialEvents (critical) of kubelet | operator, watch /api/v1/pods on a: goroutines 1000,1004,1008 and 4 more\n"
	if !strings.Contains(wide.String(), want) {
		t.Errorf("wide lacks %q:\n%s", want, wide.String())
	}
	var js bytes.Buffer
	if err := Print(&js, r, Options{Format: FormatJSON}); err != nil {
		t.Fatal(err)
	}
	var got api.Report
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r.Groups, got.Groups); diff != "" {
		t.Errorf("JSON groups (-want +got):\n%s", diff)
	}
	r.Groups = nil
	var table bytes.Buffer
	if err := Print(&table, r, Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(table.String(), "COUNT") || strings.Count(table.String(), "\nStuckInitialEvents") != 7 {
		t.Errorf("without groups, want a row per finding:\n%s", table.String())
	}
}

// TestFleetGroups: in a fleet's table each cluster's groups are COUNT rows,
// their members found among every cluster's findings; -o wide keeps a row
// per finding and lists each cluster's groups, led by its context, as -o
// wide of one report lists them.
func TestFleetGroups(t *testing.T) {
	fr := &api.FleetReport{Clusters: []api.ClusterReport{{Context: "one", Report: storm(2)}, {Context: "two", Report: storm(6)}, {Context: "down", Error: "refused"}}}
	fr.Clusters[0].Report.Groups = nil
	var b bytes.Buffer
	if err := Print(&b, fr, Options{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "\n6       two       a ") || strings.Count(out, "\n1       one       a ") != 2 {
		t.Errorf("want two rows of one and a COUNT row of two:\n%s", out)
	}
	if strings.Contains(out, "Groups of findings alike") {
		t.Errorf("the table lists the groups it merged:\n%s", out)
	}
	var wide bytes.Buffer
	if err := Print(&wide, fr, Options{Format: FormatWide}); err != nil {
		t.Fatal(err)
	}
	out = wide.String()
	if rows := strings.Count(out, "\ntwo       a "); rows != 6 {
		t.Errorf("wide: %d rows of two, want one per finding, 6:\n%s", rows, out)
	}
	want := "\nGroups of findings alike (one row with a COUNT in -o table):\n  - two: 6 StuckInitialEvents (critical) of kubelet | operator, watch /api/v1/pods on a: goroutines 1000,1004,1008 and 3 more\n"
	if !strings.HasSuffix(out, want) {
		t.Errorf("wide does not end with the groups %q:\n%s", want, out)
	}
	if strings.Contains(out, "one: ") {
		t.Errorf("wide lists a group of a cluster that has none:\n%s", out)
	}
}
