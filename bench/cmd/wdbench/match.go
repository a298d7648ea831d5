package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/dumpgen"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// Targets of issue 10 item 5: client matching at scale.
const (
	targetMatchWall = 2 * time.Second
	targetMatchRSS  = 256 << 20
)

// maxDumpSize raises analyze's bound on a debug=2 dump (128 MiB by
// default, bundle.MaxFileBytes): 50,000 planted watchers are a 380 MB
// dump, as a crash-log traceback of such a server would be.
const maxDumpSize = "1Gi"

// The shapes of a storm (issue 29 item 2): what the n watches share
// besides their resource.
const (
	// shapeSpread: each watch on its own connection, the requests a
	// millisecond apart.
	shapeSpread = "spread"
	// shapeOneConn: every handler on one connection goroutine (a hostile
	// or synthetic dump: a real server caps streams per connection).
	shapeOneConn = "one-connection"
	// shapeSameInstant: every request started at the same instant, so
	// nothing orders them.
	shapeSameInstant = "same-instant"
)

// matchBench measures `analyze DIR -o json` on a bundle of n planted
// initial-phase watches stuck in the replay (a generated debug=2 dump) and
// an APF dump listing their n executing watch requests: the matching of
// watchers to requests, which was quadratic before, and (-shape) the
// connection evidence of one crowded connection, which was too.
func matchBench(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("wdbench match", flag.ContinueOnError)
	wd := fs.String("wd", "", "path to the kubectl-watch_doctor binary")
	dir := fs.String("dir", filepath.Join("bench", "out", "match"), "directory for the generated bundle")
	n := fs.Int("n", 50000, "initial-phase watchers, and APF rows")
	runs := fs.Int("runs", 3, "process runs; the best wall time counts")
	shape := fs.String("shape", shapeSpread, "what the watches share: "+shapeSpread+", "+shapeOneConn+" or "+shapeSameInstant)
	if err := fs.Parse(args); err != nil {
		return err
	}
	step := time.Millisecond
	switch *shape {
	case shapeSpread, shapeOneConn:
	case shapeSameInstant:
		step = 0
	default:
		return fmt.Errorf("unknown -shape %q: use %s, %s or %s", *shape, shapeSpread, shapeOneConn, shapeSameInstant)
	}
	if *wd == "" {
		return fmt.Errorf("missing -wd: pass the path of the kubectl-watch_doctor binary")
	}
	set, err := dumpgen.Repo()
	if err != nil {
		return err
	}
	name := fmt.Sprintf("match-%d", *n)
	if *shape != shapeSpread {
		name += "-" + *shape
	}
	bundle := filepath.Join(*dir, name)
	if err := os.MkdirAll(bundle, 0o755); err != nil {
		return err
	}
	const wait = 5
	res, _, err := set.EnsureFile(filepath.Join(bundle, "goroutine-debug2.txt"), dumpgen.Config{Goroutines: 4**n + 20000, Stuck: *n, WaitMinutes: wait, TrimHandlers: true, OneConnection: *shape == shapeOneConn})
	if err != nil {
		return err
	}
	at := time.Date(2026, 11, 29, 10, 30, 0, 0, time.UTC)
	if err := os.WriteFile(filepath.Join(bundle, "captured-at.txt"), []byte(at.Format(time.RFC3339)+"\n"), 0o644); err != nil {
		return err
	}
	if err := writeAPFRows(filepath.Join(bundle, "apf-requests.txt"), *n, at.Add(-(wait+1)*time.Minute), step); err != nil {
		return err
	}
	fmt.Fprintf(out, "matching (%s storm: %s): analyze -o json on %d initial-phase watchers (%d goroutines, %.1f MB) with %d executing watch requests in the APF dump, best of %d\n",
		*shape, shapeText[*shape], len(res.Planted), res.Goroutines, float64(res.Bytes)/1e6, *n, *runs)
	best, walls, err := bestOf(*runs, 2*time.Minute, func(m measurement) error { return checkMatch(m, len(res.Planted)) }, *wd, "analyze", "--max-dump-size", maxDumpSize, bundle, "-o", "json")
	if err != nil {
		return err
	}
	cpu := best.user + best.sys
	fmt.Fprintf(out, "  wall %.2f s (median %.2f s; target < %s: %s), cpu %.2f s, peak RSS %.1f MiB (target < %d MiB: %s)\n",
		best.wall.Seconds(), median(walls).Seconds(), targetMatchWall, passFail(best.wall < targetMatchWall), cpu.Seconds(),
		float64(best.maxRSS)/(1<<20), targetMatchRSS>>20, passFail(best.maxRSS < targetMatchRSS))
	if err := stormTable(out, *wd, bundle, *runs); err != nil {
		return err
	}
	if load, err := os.ReadFile("/proc/loadavg"); err == nil {
		// Wall time is only as good as the machine is idle.
		fmt.Fprintf(out, "  load average during the run: %s", load)
	}
	return nil
}

// Targets of issue 21 item 6: a relist storm reads as one.
const (
	targetStormWall  = 3 * time.Second
	targetStormLines = 36
)

// stormTable measures `analyze DIR` (the table) on the same bundle: the
// storm's identical rows are one row with a COUNT.
func stormTable(out io.Writer, wd, bundle string, runs int) error {
	var best measurement
	for i := range runs {
		m, err := measure(2*time.Minute, wd, "analyze", "--max-dump-size", maxDumpSize, bundle)
		if err != nil {
			return err
		}
		if m.timedOut || m.exit != 1 {
			return fmt.Errorf("analyze (table) exited %d (timed out: %v), want 1: %s", m.exit, m.timedOut, firstLine(m.stderr))
		}
		if i == 0 || m.wall < best.wall {
			best = m
		}
	}
	lines := bytes.Count(best.stdout, []byte("\n"))
	fmt.Fprintf(out, "  table: %d lines (target <= %d: %s), %d bytes, wall %.2f s (target < %s: %s), cpu %.2f s, peak RSS %.1f MiB\n",
		lines, targetStormLines, passFail(lines <= targetStormLines), len(best.stdout), best.wall.Seconds(), targetStormWall,
		passFail(best.wall < targetStormWall), (best.user + best.sys).Seconds(), float64(best.maxRSS)/(1<<20))
	return nil
}

// shapeText says what each storm shape is, for the title line.
var shapeText = map[string]string{
	shapeSpread:      "one connection per watch, requests 1 ms apart",
	shapeOneConn:     "every handler on one connection, requests 1 ms apart",
	shapeSameInstant: "one connection per watch, every request started at the same instant",
}

// median is the middle of ds (the mean of the two middle ones).
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// writeAPFRows writes dumpgen.WriteAPFRequestsEvery to path.
func writeAPFRows(path string, n int, first time.Time, step time.Duration) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := dumpgen.WriteAPFRequestsEvery(f, n, first, step); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// checkMatch checks that every planted watch was found stuck and given
// candidates (nothing separates same-age watches of one resource).
func checkMatch(m measurement, planted int) error {
	r, err := findingsReport(m)
	if err != nil {
		return err
	}
	if r.Summary.StuckWatches != planted {
		return fmt.Errorf("analyze found %d stuck watches, want the %d planted", r.Summary.StuckWatches, planted)
	}
	for _, f := range r.Findings {
		if f.Type == api.StuckInitialEvents && (f.Client == nil || f.Client.Match != api.MatchAmbiguous) {
			return fmt.Errorf("a planted watch was not matched ambiguous among same-age requests: %+v", f.Client)
		}
	}
	return nil
}

// findingsReport is the JSON report of a run of analyze that must exit 1
// (findings).
func findingsReport(m measurement) (*api.Report, error) {
	if m.exit != 1 {
		return nil, fmt.Errorf("analyze exited %d, want 1 (findings): %s", m.exit, firstLine(m.stderr))
	}
	var r api.Report
	if err := json.Unmarshal(m.stdout, &r); err != nil {
		return nil, fmt.Errorf("reading analyze's JSON: %w", err)
	}
	return &r, nil
}
