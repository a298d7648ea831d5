package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/dumpgen"
)

// Targets of issue 34 item 3: a million audit watch events, joined.
const (
	targetAuditWall = 10 * time.Second
	targetAuditRSS  = 256 << 20
)

// auditJoinBench measures `analyze t1 t2 --audit-log FILE -o json`: the
// APF-only captures of rows stuck watches and their server's audit log of
// events watch events (dumpgen.WriteAPFOnlyAudit), every request of a
// user and path of the rows, half of the history never shown ending. The
// log goes through the engine's join; every finding must be joined to
// its own request. Before (main at 60211d8) every request of the rows'
// users and paths was kept, and those never shown ending were held until
// the end of the log.
func auditJoinBench(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("wdbench auditjoin", flag.ContinueOnError)
	wd := fs.String("wd", "", "path to the kubectl-watch_doctor binary")
	dir := fs.String("dir", filepath.Join("bench", "out", "dumps"), "directory for the generated captures and log")
	rows := fs.Int("rows", 2000, "stuck watch rows in each of the two APF dumps")
	events := fs.Int("events", 1_000_000, "audit watch events in the log")
	runs := fs.Int("runs", 3, "process runs; the best wall time counts")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *wd == "" {
		return fmt.Errorf("missing -wd: pass the path of the kubectl-watch_doctor binary")
	}
	dirs, log, err := dumpgen.WriteAPFOnlyAudit(filepath.Join(*dir, fmt.Sprintf("auditjoin-%d-%d", *rows, *events)), *rows, *events)
	if err != nil {
		return err
	}
	st, err := os.Stat(log)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "audit log joined: analyze --audit-log -o json, %d audit watch events (%.0f MB) of the users and paths of %d stuck APF rows, best of %d\n",
		*events, float64(st.Size())/1e6, *rows, *runs)
	best, walls, err := bestOf(*runs, 5*time.Minute, func(m measurement) error { return checkAuditJoined(m, *rows) }, *wd, append(append([]string{"analyze"}, dirs...), "--audit-log", log, "-o", "json")...)
	if err != nil {
		return err
	}
	cpu := best.user + best.sys
	fmt.Fprintf(out, "  wall %.2f s (median %.2f s), cpu %.2f s (target < %s: %s), peak RSS %.1f MiB (target < %d MiB: %s)\n",
		best.wall.Seconds(), median(walls).Seconds(), cpu.Seconds(), targetAuditWall, passFail(cpu < targetAuditWall),
		float64(best.maxRSS)/(1<<20), targetAuditRSS>>20, passFail(best.maxRSS < targetAuditRSS))
	if load, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Fprintf(out, "  load average during the run: %s", load)
	}
	return nil
}

// checkAuditJoined checks that every row was found stuck and joined to
// its own audit event (one source address).
func checkAuditJoined(m measurement, rows int) error {
	r, err := findingsReport(m)
	if err != nil {
		return err
	}
	joined := 0
	for _, f := range r.Findings {
		if f.Client != nil && len(f.Client.SourceIPs) == 1 {
			joined++
		}
	}
	if r.Summary.StuckWatches != rows || joined != rows {
		return fmt.Errorf("analyze found %d stuck watches, %d joined to their audit event; want the %d rows, each joined", r.Summary.StuckWatches, joined, rows)
	}
	return nil
}
