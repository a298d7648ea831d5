package report

import (
	"fmt"
	"io"
	"strconv"

	"github.com/watch-doctor/watch-doctor/pkg/watches"
)

// KindFleetReport is the kind of a report over several clusters.
const KindFleetReport = "FleetReport"

// FleetReport is the outcome of diagnose over several kubeconfig contexts.
// Field names in JSON/YAML are a contract within watchdoctor/v1alpha1:
// clusters[] (context, cluster, server, report or error) and summary.
type FleetReport struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Clusters   []ClusterReport `json:"clusters"`
	Summary    FleetSummary    `json:"summary"`
}

// ClusterReport is what was read of one context: its report (possibly
// partial) and the error that stopped or degraded it.
type ClusterReport struct {
	// Context is the kubeconfig context; Cluster and Server what it names.
	Context string          `json:"context"`
	Cluster string          `json:"cluster,omitempty"`
	Server  string          `json:"server,omitempty"`
	Report  *watches.Report `json:"report,omitempty"`
	// Error is set when the cluster could not be read fully (the report,
	// if any, covers what was read).
	Error string `json:"error,omitempty"`
}

// FleetSummary totals the clusters' reports.
type FleetSummary struct {
	Clusters     int `json:"clusters"`
	Failed       int `json:"failed"`
	StuckWatches int `json:"stuckWatches"`
	SlowWatches  int `json:"slowWatches"`
	StuckSeats   int `json:"stuckSeats"`
}

// NewFleetReport totals clusters into a report.
func NewFleetReport(clusters []ClusterReport) *FleetReport {
	fr := &FleetReport{APIVersion: watches.APIVersion, Kind: KindFleetReport, Clusters: clusters}
	fr.Summary.Clusters = len(clusters)
	for _, c := range clusters {
		if c.Error != "" {
			fr.Summary.Failed++
		}
		if c.Report != nil {
			fr.Summary.StuckWatches += c.Report.Summary.StuckWatches
			fr.Summary.SlowWatches += c.Report.Summary.SlowWatches
			fr.Summary.StuckSeats += c.Report.Summary.StuckSeats
		}
	}
	return fr
}

// RenderFleet writes a fleet report: JSON/YAML as is; as a table, one
// findings table with a CLUSTER column, then one line per cluster.
func RenderFleet(w io.Writer, fr *FleetReport, f Format) error {
	switch f {
	case FormatJSON, FormatYAML:
		return writeStructured(w, fr, f)
	case FormatTable, FormatWide:
	default:
		return fmt.Errorf("unsupported format %q: use one of table, wide, json, yaml", f)
	}
	wide := f == FormatWide
	ew := &errWriter{w: escapeWriter{w}}
	findings := 0
	for _, c := range fr.Clusters {
		if c.Report != nil {
			findings += len(c.Report.Findings)
		}
	}
	if findings > 0 {
		t := NewTable(ew, append([]string{"cluster"}, findingHeaders(true, wide)...)...)
		for _, c := range fr.Clusters {
			if c.Report == nil {
				continue
			}
			for _, fd := range c.Report.Findings {
				if err := t.Append(append([]string{c.Context}, findingRow(fd, true, wide)...)...); err != nil {
					return err
				}
			}
		}
		if err := t.Render(); err != nil {
			return err
		}
		fmt.Fprintln(ew)
	}
	t := NewTable(ew, "cluster", "server", "apiservers", "stuck", "slow", "stuck seats", "status")
	for _, c := range fr.Clusters {
		servers, stuck, slow, seats := "-", "-", "-", "-"
		if r := c.Report; r != nil {
			servers, stuck, slow, seats = strconv.Itoa(len(r.APIServers)), strconv.Itoa(r.Summary.StuckWatches), strconv.Itoa(r.Summary.SlowWatches), strconv.Itoa(r.Summary.StuckSeats)
		}
		status := "ok"
		if c.Error != "" {
			status = "error: " + c.Error
		}
		if err := t.Append(c.Context, orDash(c.Server), servers, stuck, slow, seats, status); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	s := fr.Summary
	fmt.Fprintf(ew, "Summary: %d stuck watch(es) holding %d APF seat(s), %d slow, over %d cluster(s)", s.StuckWatches, s.StuckSeats, s.SlowWatches, s.Clusters)
	if s.Failed > 0 {
		fmt.Fprintf(ew, "; %d cluster(s) not read fully", s.Failed)
	}
	fmt.Fprintln(ew, ".")
	for _, c := range fr.Clusters {
		if c.Report == nil {
			continue
		}
		for _, a := range c.Report.Advice {
			fmt.Fprintf(ew, "  - %s: %s\n", c.Context, a)
		}
		for _, wn := range c.Report.Warnings {
			fmt.Fprintf(ew, "  warning: %s: %s\n", c.Context, wn)
		}
	}
	return ew.err
}
