package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// The table make bench prints: one row per tool and size.

func extraRSS(rows []row) string {
	var parts []string
	for _, r := range rows {
		how := "from stdin"
		if strings.HasSuffix(r.tool, ".gz") {
			how = "gzipped"
		}
		parts = append(parts, fmt.Sprintf("%.1f MiB %s", float64(r.maxRSS)/(1<<20), how))
	}
	return strings.Join(parts, ", ")
}

// row is one tool on one dump.
type row struct {
	size     int
	bytes    int64
	tool     string
	runs     int
	best     time.Duration // best wall time
	cpu      time.Duration // least user+sys time seen
	maxRSS   int64
	timedOut bool
	startup  time.Duration
	// startupCPU is the CPU time of the start-up run.
	startupCPU time.Duration
	// allocations: from the probe (ours) or the peer's report.
	mallocs    uint64
	allocBytes uint64
	extra      string
}

func (r *row) add(m measurement) {
	r.runs++
	if r.runs == 1 || m.wall < r.best {
		r.best = m.wall
	}
	if c := m.user + m.sys; r.runs == 1 || c < r.cpu {
		r.cpu = c
	}
	if m.maxRSS > r.maxRSS {
		r.maxRSS = m.maxRSS
	}
	r.timedOut = r.timedOut || m.timedOut
}

func (r row) mbps(cpu bool) float64 {
	d := r.best
	if cpu {
		d = r.cpu
	}
	return float64(r.bytes) / 1e6 / d.Seconds()
}

func (r row) nsPerGoroutine() float64 { return float64(r.best.Nanoseconds()) / float64(r.size) }

func (r row) nsPerGoroutineNet() float64 {
	return float64((r.best - r.startup).Nanoseconds()) / float64(r.size)
}

func (r row) cpuNsPerGoroutineNet() float64 {
	return float64((r.cpu - r.startupCPU).Nanoseconds()) / float64(r.size)
}

func printTable(out io.Writer, rows []row) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "dump\tMB\ttool\tbest wall\tMB/s\tns/goroutine\tCPU\tMB/s CPU\tallocs\talloc MB\tpeak RSS MiB\t note")
	for _, r := range rows {
		allocs, allocMB := "-", "-"
		if r.mallocs > 0 {
			allocs, allocMB = strconv.FormatUint(r.mallocs, 10), fmt.Sprintf("%.0f", float64(r.allocBytes)/1e6)
		}
		g := geq(r.timedOut)
		l := leq(r.timedOut)
		note := r.extra
		if r.timedOut {
			note = "stopped at the time limit"
		}
		fmt.Fprintf(tw, "%s\t%.1f\t%s\t%s%s\t%s%.0f\t%s%.0f\t%s%s\t%s%.0f\t%s\t%s\t%s%.1f\t %s\n",
			sizeName(r.size), float64(r.bytes)/1e6, r.tool, g, ms(r.best), l, r.mbps(false), g, r.nsPerGoroutine(),
			g, ms(r.cpu), l, r.mbps(true), allocs, allocMB, g, float64(r.maxRSS)/(1<<20), note)
	}
	tw.Flush()
}

func geq(b bool) string {
	if b {
		return ">="
	}
	return ""
}

func leq(b bool) string {
	if b {
		return "<="
	}
	return ""
}

func ratio(a, b row, cpu bool) string {
	return fmt.Sprintf("%s%.2fx", geq(b.timedOut), a.mbps(cpu)/b.mbps(cpu))
}
