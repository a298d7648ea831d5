package main

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/dumpgen"
)

// Targets of issue 29 item 1, on the 300k-goroutine dump: the whole
// command at least 4x as fast as gostackparse's parse alone, within 8x
// of `wc -l` reading the same file, under 128 MiB peak RSS.
const (
	targetFloorVsGostackparse = 4.0
	targetFloorVsWc           = 8.0
	targetFloorRSS            = 128 << 20
)

// floorBench measures, in one run and alternating run by run,
// `analyze --max-dump-size 1Gi -o json` on a generated debug=2 dump of n
// goroutines (288 MB at 300k, over the default 128 MiB bound), the
// gostackparse parse of the same file, and `wc -l` on it (reading the
// bytes and finding the newlines: the floor of any parser). It prints
// min and median wall and CPU time and peak RSS of each, and the ratios
// run by run (so that a burst of load hits both sides of a ratio alike).
func floorBench(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("wdbench floor", flag.ContinueOnError)
	wd := fs.String("wd", "", "path to the kubectl-watch_doctor binary")
	peers := fs.String("peers", "", "path to the bench/peers binary")
	dir := fs.String("dir", filepath.Join("bench", "out", "dumps"), "directory for the generated dump (reused between runs)")
	size := fs.String("n", "300k", "goroutines in the dump (k and M suffixes)")
	stuck := fs.Int("stuck", 134, "stuck watches planted in the dump")
	runs := fs.Int("runs", 3, "runs of each tool, alternating")
	base := fs.String("base", "", "another kubectl-watch_doctor binary (main's, say) run alternately with -wd, for an A/B")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *wd == "" || *peers == "" {
		return fmt.Errorf("-wd and -peers are required (bench/run.sh builds them)")
	}
	if *runs < 1 {
		return fmt.Errorf("-runs %d: want at least 1", *runs)
	}
	n, err := dumpgen.ParseSize(*size)
	if err != nil {
		return err
	}
	set, err := dumpgen.Repo()
	if err != nil {
		return err
	}
	path := filepath.Join(*dir, fmt.Sprintf("floor-%s-%d.txt", sizeName(n), *stuck))
	res, _, err := set.EnsureFile(path, dumpgen.Config{Goroutines: n, Stuck: *stuck})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "floor: a %s-goroutine dump (%.1f MB, %d stuck watches planted), %d runs of each tool alternating, load average %s\n",
		sizeName(n), float64(res.Bytes)/1e6, len(res.Planted), *runs, loadavg())
	rs, err := floorRuns(*runs, *wd, *base, *peers, path, n, res)
	if err != nil {
		return err
	}
	ours, gsp, wc := rs.ours, rs.gsp, rs.wc
	fmt.Fprintln(out, "| tool | wall min | wall median | CPU min | CPU median | peak RSS max |")
	fmt.Fprintln(out, "|---|---|---|---|---|---|")
	for _, t := range []struct {
		name string
		ms   []measurement
	}{{"watch-doctor analyze --max-dump-size 1Gi -o json", ours}, {"the same, -base binary", rs.base}, {"gostackparse.Parse", gsp}, {"wc -l", wc}} {
		if len(t.ms) == 0 {
			continue
		}
		walls, cpus := figures(t.ms)
		peak := int64(0)
		for _, m := range t.ms {
			peak = max(peak, m.maxRSS)
		}
		fmt.Fprintf(out, "| %s | %s | %s | %s | %s | %.1f MiB |\n", t.name, ms(slices.Min(walls)), ms(median(walls)), ms(slices.Min(cpus)), ms(median(cpus)), float64(peak)/(1<<20))
	}
	vsGsp, vsWc := ratios(gsp, ours), ratios(ours, wc)
	peak := int64(0)
	for _, m := range ours {
		peak = max(peak, m.maxRSS)
	}
	verdict := func(ok bool) string { return map[bool]string{true: "PASS", false: "MISS"}[ok] }
	fmt.Fprintf(out, "%s  gostackparse's wall / ours, run by run: %s, median %.2fx (target >= %.0fx)\n", verdict(medianF(vsGsp) >= targetFloorVsGostackparse), floats(vsGsp), medianF(vsGsp), targetFloorVsGostackparse)
	fmt.Fprintf(out, "%s  our wall / wc -l's, run by run: %s, median %.1fx (target <= %.0fx)\n", verdict(medianF(vsWc) <= targetFloorVsWc), floats(vsWc), medianF(vsWc), targetFloorVsWc)
	cpuGsp, cpuWc := cpuRatios(gsp, ours), cpuRatios(ours, wc)
	fmt.Fprintf(out, "      in CPU time (user+sys), run by run: gostackparse's / ours %s (median %.2fx), ours / wc -l's %s (median %.1fx)\n", floats(cpuGsp), medianF(cpuGsp), floats(cpuWc), medianF(cpuWc))
	if len(rs.base) > 0 {
		fmt.Fprintf(out, "      -base / -wd, run by run: wall %s (median %.2fx), CPU %s (median %.2fx)\n",
			floats(ratios(rs.base, ours)), medianF(ratios(rs.base, ours)), floats(cpuRatios(rs.base, ours)), medianF(cpuRatios(rs.base, ours)))
	}
	fmt.Fprintf(out, "%s  our peak RSS %.1f MiB (target < %d MiB)\n", verdict(peak < targetFloorRSS), float64(peak)/(1<<20), targetFloorRSS>>20)
	fmt.Fprintf(out, "load average at the end: %s\n", loadavg())
	return nil
}

// floorMeasurements are the runs of each tool, in the order they ran.
type floorMeasurements struct{ ours, base, gsp, wc []measurement }

// floorRuns runs each tool runs times, alternating: wd (and base, when
// set), gostackparse, wc -l.
func floorRuns(runs int, wd, base, peers, path string, n int, res dumpgen.Result) (floorMeasurements, error) {
	var rs floorMeasurements
	ours := func(bin string, into *[]measurement) error {
		m, err := measure(10*time.Minute, bin, "analyze", "--max-dump-size", maxDumpSize, path, "-o", "json")
		if err != nil {
			return err
		}
		if err := checkOurs(m, res); err != nil {
			return fmt.Errorf("%s on %s: %w", bin, path, err)
		}
		*into = append(*into, m)
		return nil
	}
	for range runs {
		if err := ours(wd, &rs.ours); err != nil {
			return rs, err
		}
		if base != "" {
			if err := ours(base, &rs.base); err != nil {
				return rs, err
			}
		}
		m, err := measure(10*time.Minute, peers, "-parser", "gostackparse", path)
		if err != nil {
			return rs, err
		}
		if err := checkPeer(m, n, &row{}); err != nil {
			return rs, fmt.Errorf("gostackparse on %s: %w", path, err)
		}
		rs.gsp = append(rs.gsp, m)
		m, err = measure(10*time.Minute, "wc", "-l", path)
		if err != nil {
			return rs, err
		}
		if m.exit != 0 || m.timedOut {
			return rs, fmt.Errorf("wc -l %s: exit %d (timed out: %v): %s", path, m.exit, m.timedOut, firstLine(m.stderr))
		}
		rs.wc = append(rs.wc, m)
	}
	return rs, nil
}

// figures are the wall and CPU (user+sys) times of ms.
func figures(ms []measurement) (walls, cpus []time.Duration) {
	for _, m := range ms {
		walls = append(walls, m.wall)
		cpus = append(cpus, m.user+m.sys)
	}
	return walls, cpus
}

// ratios divides a's wall time by b's, run by run.
func ratios(a, b []measurement) []float64 {
	out := make([]float64, len(a))
	for i := range a {
		out[i] = a[i].wall.Seconds() / b[i].wall.Seconds()
	}
	return out
}

// cpuRatios divides a's CPU time by b's, run by run.
func cpuRatios(a, b []measurement) []float64 {
	out := make([]float64, len(a))
	for i := range a {
		out[i] = (a[i].user + a[i].sys).Seconds() / (b[i].user + b[i].sys).Seconds()
	}
	return out
}

func medianF(fs []float64) float64 {
	s := slices.Clone(fs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func floats(fs []float64) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = fmt.Sprintf("%.2f", f)
	}
	return strings.Join(parts, ", ")
}
