package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/dumpgen"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// Targets of issue 34 item 3: the APF-only path at scale.
const (
	targetAPFOnlyWall = 3 * time.Second
	targetAPFOnlyRSS  = 256 << 20
)

// apfOnlyBench measures `analyze t1 t2 -o json` on two captures of a
// server without profiling (dumpgen.WriteAPFOnlyCaptures): n executing
// watch rows in each APF dump_requests, no goroutine dump, every row
// stuck (no watch event of pods between the captures). Before issue 34
// the diagnosis was quadratic in the rows: 5,000 took 22 s of CPU, 50,000
// did not end in 12 minutes.
func apfOnlyBench(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("wdbench apfonly", flag.ContinueOnError)
	wd := fs.String("wd", "", "path to the kubectl-watch_doctor binary")
	dir := fs.String("dir", filepath.Join("bench", "out", "apfonly"), "directory for the generated captures")
	n := fs.Int("n", 50000, "executing watch rows in each of the two APF dumps")
	runs := fs.Int("runs", 3, "process runs; the best wall time counts")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *wd == "" {
		return fmt.Errorf("missing -wd: pass the path of the kubectl-watch_doctor binary")
	}
	dirs, err := dumpgen.WriteAPFOnlyCaptures(filepath.Join(*dir, fmt.Sprintf("apfonly-%d", *n)), *n)
	if err != nil {
		return err
	}
	st, err := os.Stat(filepath.Join(dirs[0], "apf-requests.txt"))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "APF-only: analyze -o json on two captures without a goroutine dump, %d executing watch rows in each APF dump_requests (%.1f MB each), best of %d\n",
		*n, float64(st.Size())/1e6, *runs)
	best, walls, err := bestOf(*runs, 2*time.Minute, func(m measurement) error { return checkAPFOnly(m, *n) }, *wd, append(append([]string{"analyze"}, dirs...), "-o", "json")...)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  wall %.2f s (median %.2f s; target < %s: %s), cpu %.2f s, peak RSS %.1f MiB (target < %d MiB: %s)\n",
		best.wall.Seconds(), median(walls).Seconds(), targetAPFOnlyWall, passFail(best.wall < targetAPFOnlyWall), (best.user + best.sys).Seconds(),
		float64(best.maxRSS)/(1<<20), targetAPFOnlyRSS>>20, passFail(best.maxRSS < targetAPFOnlyRSS))
	if load, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Fprintf(out, "  load average during the run: %s", load)
	}
	return nil
}

// checkAPFOnly checks that every row was found stuck, from the APF dumps
// alone.
func checkAPFOnly(m measurement, n int) error {
	r, err := findingsReport(m)
	if err != nil {
		return err
	}
	if r.Summary.StuckWatches != n || len(r.APIServers) != 1 || r.APIServers[0].DumpFormat != api.DumpFormatAPF {
		return fmt.Errorf("analyze found %d stuck watches on %d servers, want the %d rows on one server read from APF alone", r.Summary.StuckWatches, len(r.APIServers), n)
	}
	return nil
}
