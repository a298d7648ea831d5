package engine

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/bundle"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// TestRunLoadedGivesRecordedCostByField: a loaded bundle's servers get
// what its manifest recorded of their instance, matched by the instance's
// name as a field; captures read alone get nothing.
func TestRunLoadedGivesRecordedCostByField(t *testing.T) {
	loaded, err := bundle.Load([]string{golden.Fixture("t1"), golden.Fixture("t2")}, bundle.Options{})
	if err != nil {
		t.Fatal(err)
	}
	alone, err := Run(context.Background(), Config{Loaded: loaded})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range alone.Report.APIServers {
		if a.Cost != nil {
			t.Errorf("%s: cost %+v without a manifest", a.Name, a.Cost)
		}
	}
	for _, c := range loaded.Captures {
		c.Instance = "10.0.0.1:6443"
	}
	cost := &api.ServerCost{BytesRead: 42}
	loaded.Instances = []api.Instance{{Name: "10.0.0.9:6443"}, {Name: "10.0.0.1:6443", Address: "10.0.0.1:6443", Pinned: true, Cost: cost, Evidence: "goroutine dump"}}
	res, err := Run(context.Background(), Config{Loaded: loaded})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Report.APIServers) == 0 || len(res.Report.APIServers) != len(res.Processes) {
		t.Fatalf("servers: report %d, result %d", len(res.Report.APIServers), len(res.Processes))
	}
	for i, a := range res.Report.APIServers {
		if diff := cmp.Diff(cost, a.Cost); diff != "" || a.Evidence != "goroutine dump" {
			t.Errorf("%s: evidence %q, cost (-want +got):\n%s", a.Name, a.Evidence, diff)
		}
		id := res.Processes[i]
		if diff := cmp.Diff(model.Instance{Name: "10.0.0.1:6443", Address: "10.0.0.1:6443", Pinned: true}, id.Instance); diff != "" {
			t.Errorf("%s: instance (-want +got):\n%s", a.Name, diff)
		}
	}
}

func TestFind(t *testing.T) {
	insts := []api.Instance{{Name: "a", Evidence: "first"}, {Name: "b"}, {Name: "a", Evidence: "later"}}
	for _, tc := range []struct {
		name, want string
		found      bool
	}{
		{"a", "later", true},
		{"b", "", true},
		{"c", "", false},
		{"", "", false},
	} {
		got := find(insts, tc.name)
		if (got != nil) != tc.found || got != nil && got.Evidence != tc.want {
			t.Errorf("find(%q) = %+v, want found %v with evidence %q", tc.name, got, tc.found, tc.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	in := []string{"instance 10.0.0.1:6443 not read directly", "instance 10.0.0.2:6443 not read directly", "instance 10.0.0.3:6443 not read directly", "instance 10.0.0.4:6443 not read directly", "other"}
	want := []string{"instance 10.0.0.1:6443 not read directly", "instance 10.0.0.2:6443 not read directly", "instance 10.0.0.3:6443 not read directly", "and 1 more like it", "other"}
	if diff := cmp.Diff(want, Summarize(in)); diff != "" {
		t.Errorf("Summarize (-want +got):\n%s", diff)
	}
}
