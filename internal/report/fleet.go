package report

import (
	"strconv"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// printFleet writes a fleet report as one findings table with a CLUSTER
// column, then one line per cluster; wide adds each cluster's groups of
// findings alike, as wide does for one report. Under NoHeaders it is the
// findings' rows alone.
func printFleet(t *text, fr *api.FleetReport) error {
	var findings []api.Finding
	var clusters []string
	var groups []api.FindingGroup
	for _, c := range fr.Clusters {
		if c.Report == nil {
			continue
		}
		groups = append(groups, offsetGroups(c.Report.Groups, len(findings))...)
		for _, fd := range c.Report.Findings {
			findings = append(findings, fd)
			clusters = append(clusters, c.Context)
		}
	}
	if t.opts.NoHeaders {
		return findingsTable(t, findings, groups, clusters, true)
	}
	if len(findings) > 0 {
		if err := findingsTable(t, findings, groups, clusters, true); err != nil {
			return err
		}
		t.println()
	}
	tb := t.table(false, "cluster", "server", "apiservers", "stuck", "slow", "stuck seats", "status")
	for _, c := range fr.Clusters {
		servers, stuck, slow, seats := "-", "-", "-", "-"
		if r := c.Report; r != nil {
			servers, stuck, slow, seats = strconv.Itoa(len(r.APIServers)), strconv.Itoa(r.Summary.StuckWatches), strconv.Itoa(r.Summary.SlowWatches), strconv.Itoa(r.Summary.StuckSeats)
		}
		status := "ok"
		if c.Error != "" {
			status = "error: " + c.Error
		}
		if err := tb.append(c.Context, orDash(c.Server), servers, stuck, slow, seats, status); err != nil {
			return err
		}
	}
	if err := tb.render(); err != nil {
		return err
	}
	s := fr.Summary
	t.printf("Summary: %d stuck watch(es) holding %d APF seat(s), %d slow, over %d cluster(s)", s.StuckWatches, s.StuckSeats, s.SlowWatches, s.Clusters)
	if s.Failed > 0 {
		t.printf("; %d cluster(s) not read fully", s.Failed)
	}
	t.println(".")
	for _, c := range fr.Clusters {
		if c.Report == nil {
			continue
		}
		if in := c.Report.Instances; in != nil {
			t.printf("  instances: %s: %s\n", EscapeCell(c.Context), in.Text())
		}
		for _, a := range c.Report.Advice {
			t.item("%s: %s", EscapeCell(c.Context), a)
		}
		for _, wn := range c.Report.Warnings {
			t.printf("  warning: %s: %s\n", EscapeCell(c.Context), wn)
		}
	}
	if t.opts.wide() {
		fleetGroupLines(t, fr)
	}
	return nil
}
