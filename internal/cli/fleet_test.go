package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

type fleetDoc struct {
	Kind     string `json:"kind"`
	Clusters []struct {
		Context string     `json:"context"`
		Server  string     `json:"server"`
		Error   string     `json:"error"`
		Report  *reportDoc `json:"report"`
	} `json:"clusters"`
	Summary struct {
		Clusters     int `json:"clusters"`
		Failed       int `json:"failed"`
		StuckWatches int `json:"stuckWatches"`
	} `json:"summary"`
}

func TestFleetDiagnose(t *testing.T) {
	t.Parallel()
	a := fakeapiserver.Start(t, golden.Fixture("t2"))
	b := fakeapiserver.Start(t, golden.Fixture("t2"))
	down := fakeapiserver.Start(t, golden.Fixture("t2"))
	down.Fail = true
	kc := writeKubeconfig(t, map[string]string{"prod-a": a.URL, "prod-b": b.URL, "broken": down.URL})

	t.Run("json has clusters[] and one exit code", func(t *testing.T) {
		code, out, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--contexts", "prod-a,prod-b", "--samples", "1", "-o", "json")
		if code != ExitFindings {
			t.Fatalf("exit %d, want %d (stuck watches at critical): %s", code, ExitFindings, errOut)
		}
		var d fleetDoc
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if d.Kind != "FleetReport" || len(d.Clusters) != 2 || d.Clusters[0].Context != "prod-a" || d.Clusters[1].Context != "prod-b" {
			t.Fatalf("clusters = %+v", d.Clusters)
		}
		for _, c := range d.Clusters {
			if c.Error != "" || c.Report == nil || c.Report.Summary.StuckWatches != 1 {
				t.Errorf("%s: error %q, report %+v", c.Context, c.Error, c.Report)
			}
		}
		if d.Summary.Clusters != 2 || d.Summary.StuckWatches != 2 {
			t.Errorf("summary = %+v", d.Summary)
		}
	})
	t.Run("table has a CLUSTER column", func(t *testing.T) {
		code, out, _ := runLive(t, "diagnose", "--kubeconfig", kc, "--contexts", "prod-a,prod-b", "--samples", "1")
		if code != ExitFindings {
			t.Errorf("exit %d", code)
		}
		if !strings.HasPrefix(out, "CLUSTER ") || !strings.Contains(out, "prod-a ") || !strings.Contains(out, "prod-b ") {
			t.Errorf("table:\n%s", out)
		}
	})
	t.Run("a failing cluster does not hide the others and makes the exit 2", func(t *testing.T) {
		code, out, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--all-contexts", "--samples", "1", "-o", "json")
		if code != ExitError {
			t.Errorf("exit %d, want %d", code, ExitError)
		}
		var d fleetDoc
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if len(d.Clusters) != 3 || d.Summary.Failed != 1 || d.Summary.StuckWatches != 2 {
			t.Errorf("summary %+v, clusters %+v", d.Summary, d.Clusters)
		}
		if !strings.Contains(errOut, "1 of 3 cluster(s) not read fully (broken)") || !strings.Contains(errOut, "[broken] ") {
			t.Errorf("stderr:\n%s", errOut)
		}
	})
	t.Run("errors", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"--contexts", "nope"}, `no context "nope" in the kubeconfig: use one of broken, prod-a, prod-b`},
			{[]string{"--contexts", "prod-a", "--all-contexts"}, "use one"},
			{[]string{"--contexts", "prod-a", "--parallel", "0"}, "invalid --parallel 0"},
			{[]string{"--contexts", "prod-a", "--context", "prod-b"}, "--context and --contexts"},
		} {
			code, _, errOut := runLive(t, append([]string{"diagnose", "--kubeconfig", kc}, tc.args...)...)
			if code != ExitError || !strings.Contains(errOut, tc.want) {
				t.Errorf("%q: exit %d, stderr %q, want %q", tc.args, code, errOut, tc.want)
			}
		}
	})
}

// TestFleetReportIsDiagnoses: a cluster of a fleet run gets the report
// plain diagnose gives of it, to the value: the same engine call, with
// each server's cost, notes and evidence, and the run's warnings.
func TestFleetReportIsDiagnoses(t *testing.T) {
	a := fakeapiserver.Start(t, golden.Fixture("t2"))
	kc := writeKubeconfig(t, map[string]string{"prod": a.URL})
	_, out, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "-o", "json")
	var plain api.Report
	if err := json.Unmarshal([]byte(out), &plain); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, errOut)
	}
	if len(plain.APIServers) != 1 || plain.APIServers[0].Cost == nil || len(plain.APIServers[0].Notes) == 0 || len(plain.Warnings) == 0 {
		t.Fatalf("plain diagnose has no cost, server notes or warnings to compare: %+v\n%s", plain.APIServers, errOut)
	}
	_, out, errOut = runLive(t, "diagnose", "--kubeconfig", kc, "--contexts", "prod", "-o", "json")
	var fleet api.FleetReport
	if err := json.Unmarshal([]byte(out), &fleet); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, errOut)
	}
	if len(fleet.Clusters) != 1 || fleet.Clusters[0].Report == nil {
		t.Fatalf("clusters = %+v\n%s", fleet.Clusters, errOut)
	}
	if diff := cmp.Diff(plain, *fleet.Clusters[0].Report); diff != "" {
		t.Errorf("fleet's report of the cluster differs from diagnose's (-diagnose +fleet):\n%s", diff)
	}
}

// TestFleetNameOfAnAmbiguousClient: -o name of a fleet names an ambiguous
// client as plain -o name does (Finding.ClientLabel), not as unmatched.
func TestFleetNameOfAnAmbiguousClient(t *testing.T) {
	f := api.Finding{Type: api.StuckInitialEvents, Client: &api.Client{Match: api.MatchAmbiguous}, Candidates: []api.Request{{User: "a"}, {User: "b"}}}
	var plain, fleet strings.Builder
	if err := (namePrinter{}).Print(&plain, &api.Report{Findings: []api.Finding{f}}); err != nil {
		t.Fatal(err)
	}
	if err := (namePrinter{}).Print(&fleet, &api.FleetReport{Clusters: []api.ClusterReport{{Context: "prod", Report: &api.Report{Findings: []api.Finding{f}}}}}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("StuckInitialEvents/a | b\n", plain.String()); diff != "" {
		t.Errorf("-o name (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("prod/StuckInitialEvents/a | b\n", fleet.String()); diff != "" {
		t.Errorf("fleet -o name (-want +got):\n%s", diff)
	}
}
