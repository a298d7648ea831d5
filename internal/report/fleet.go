package report

import (
	"fmt"
	"io"
	"strconv"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// RenderFleet writes a fleet report: JSON/YAML as is; as a table, one
// findings table with a CLUSTER column, then one line per cluster.
func RenderFleet(w io.Writer, fr *api.FleetReport, f Format) error {
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
