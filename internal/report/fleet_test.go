package report

import (
	"bytes"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/golden"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

func fleetFixture() *api.FleetReport {
	two := 2
	stuck := api.Finding{Type: api.StuckInitialEvents, Severity: api.SeverityCritical, BlockedMinutes: &two, APIServer: "10.0.0.1:6443", Message: "a watch is stuck"}
	prod := &api.Report{APIServers: []api.APIServer{{Name: "10.0.0.1:6443"}, {Name: "10.0.0.2:6443"}}, Findings: []api.Finding{stuck},
		Summary: api.Summary{StuckWatches: 1, StuckSeats: 1}, Advice: []string{"restart the client"}, Warnings: []string{"one sample"},
		Instances: &api.InstanceCoverage{Read: 2, Live: 2, Source: api.LiveFromLeases, ThroughBalancer: true, Connections: 3}}
	return &api.FleetReport{
		Clusters: []api.ClusterReport{
			{Context: "prod", Server: "https://prod:6443", Report: prod},
			{Context: "dev", Report: &api.Report{APIServers: []api.APIServer{{Name: "dev"}}}},
			{Context: "lab", Server: "https://lab:6443", Error: "refused"},
		},
		Summary: api.FleetSummary{Clusters: 3, Failed: 1, StuckWatches: 1, StuckSeats: 1},
	}
}

// TestPrintFleet: the findings of every cluster in one table with their
// cluster, one line per cluster (a failed one says why), the summary, then
// each cluster's coverage ("N of M instances read"), advice and warnings
// named by it; --no-headers keeps the
// findings' rows alone.
func TestPrintFleet(t *testing.T) {
	for _, tc := range []struct {
		name, golden string
		opts         Options
	}{
		{"table", "fleet.txt", Options{}},
		{"no-headers", "fleet-no-headers.txt", Options{NoHeaders: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Print(&b, fleetFixture(), tc.opts); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, tc.golden, b.Bytes())
		})
	}
}
