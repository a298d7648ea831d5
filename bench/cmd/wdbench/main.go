// Command wdbench measures `kubectl watch-doctor analyze FILE -o json`
// against two public goroutine-dump parsers on the same generated dumps, in
// one run, and checks that the analysis finds exactly the stuck watches
// planted in each dump. bench/run.sh builds the binaries and calls it; see
// bench/README.md.
//
//	wdbench -wd BIN -peers BIN [-dir DIR] [-sizes 10k,100k,1M] [-runs 3]
//	wdbench match -wd BIN [-shape spread|one-connection|same-instant] [-n 50000]
//	wdbench floor -wd BIN -peers BIN [-n 300k] [-stuck 134]
//	wdbench apfonly -wd BIN [-n 50000]
//	wdbench auditjoin -wd BIN [-rows 2000] [-events 1000000]
//	wdbench probe FILE      (internal: one in-process analyze, prints allocations)
//
// Every tool runs as its own process, one at a time, reading the same file
// from the page cache. Wall time is the best of -runs runs, interleaved
// across tools so that a burst of load on a shared machine hits them alike;
// CPU time (user+sys) and peak RSS come from the kernel's rusage of the
// child (what `/usr/bin/time -v` prints as "Maximum resident set size").
// Allocations of watch-doctor come from one in-process run of the same
// command (wdbench probe), those of the peers from their own runtime.
package main

import (
	"bytes"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/dumpgen"
)

// Targets of issue 6, checked on the largest dump.
const (
	targetVsGostackparse = 1.0
	targetVsPanicparse   = 10.0
	targetPeakRSS        = 256 << 20
	targetScaling        = 1.5
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "probe" {
		os.Exit(probe(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "floor" {
		if err := floorBench(os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "wdbench floor:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "apfonly" {
		if err := apfOnlyBench(os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "wdbench apfonly:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "auditjoin" {
		if err := auditJoinBench(os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "wdbench auditjoin:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "match" {
		if err := matchBench(os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "wdbench match:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "wdbench:", err)
		os.Exit(1)
	}
}

type options struct {
	wd, peers  string
	dir        string
	sizes      []int
	runs       int
	stuck      int
	ppTimeout  time.Duration
	gspTimeout time.Duration
	strict     bool
}

func run(args []string, out io.Writer) error {
	var o options
	fs := flag.NewFlagSet("wdbench", flag.ContinueOnError)
	fs.StringVar(&o.wd, "wd", "", "path to the kubectl-watch_doctor binary")
	fs.StringVar(&o.peers, "peers", "", "path to the bench/peers binary")
	fs.StringVar(&o.dir, "dir", filepath.Join("bench", ".cache", "dumps"), "directory for the generated dumps (reused between runs)")
	sizes := fs.String("sizes", "10k,100k,1M", "goroutines per generated dump, comma-separated (k and M suffixes)")
	fs.IntVar(&o.runs, "runs", 3, "runs per tool and dump; the best wall time counts")
	fs.IntVar(&o.stuck, "stuck", 8, "stuck watches planted in each dump")
	fs.DurationVar(&o.ppTimeout, "panicparse-timeout", 60*time.Second, "stop panicparse after this long and report a lower bound (its Aggregate is quadratic on Go >= 1.21 dumps)")
	fs.DurationVar(&o.gspTimeout, "timeout", 10*time.Minute, "stop any other run after this long")
	fs.BoolVar(&o.strict, "strict", false, "exit non-zero when a performance target is missed (correctness failures always do)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.wd == "" || o.peers == "" {
		return errors.New("-wd and -peers are required (bench/run.sh builds them)")
	}
	for _, s := range strings.Split(*sizes, ",") {
		n, err := dumpgen.ParseSize(strings.TrimSpace(s))
		if err != nil {
			return err
		}
		o.sizes = append(o.sizes, n)
	}
	sort.Ints(o.sizes)
	if o.runs < 1 {
		return fmt.Errorf("-runs %d: want at least 1", o.runs)
	}

	set, err := dumpgen.LoadRepo()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "machine: %s/%s, %d CPUs, load average %s\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), loadavg())
	if gnuTime != "" {
		fmt.Fprintf(out, "peak RSS: %s -v (Maximum resident set size)\n", gnuTime)
	} else {
		fmt.Fprintln(out, "peak RSS: rusage of each child, straight from this driver (no /usr/bin/time): the figures cannot go below this driver's own RSS")
	}

	// Fixed cost of a run: a dump holding one planted watch and nothing else.
	tiny := filepath.Join(o.dir, "goroutines-4.txt")
	tinyRes, _, err := set.EnsureFile(tiny, dumpgen.Config{Goroutines: 4, Stuck: 1})
	if err != nil {
		return err
	}
	var startup, startupCPU time.Duration
	for r := 0; r < smallRuns(o.runs, 0); r++ {
		m, err := measure(o.gspTimeout, o.wd, "analyze", tiny, "-o", "json")
		if err != nil {
			return err
		}
		if err := checkOurs(m, tinyRes); err != nil {
			return fmt.Errorf("%s: %w", tiny, err)
		}
		if r == 0 || m.wall < startup {
			startup = m.wall
		}
		if c := m.user + m.sys; r == 0 || c < startupCPU {
			startupCPU = c
		}
	}
	fmt.Fprintf(out, "watch-doctor startup (analyze of a 4-goroutine dump): %s wall, %s CPU\n\n", ms(startup), ms(startupCPU))

	var rows, extra []row
	var failures, misses []string
	for _, n := range o.sizes {
		path := filepath.Join(o.dir, fmt.Sprintf("goroutines-%s.txt", sizeName(n)))
		t0 := time.Now()
		res, reused, err := set.EnsureFile(path, dumpgen.Config{Goroutines: n, Stuck: o.stuck})
		if err != nil {
			return err
		}
		how := "generated in " + ms(time.Since(t0))
		if reused {
			how = "reused"
		}
		fmt.Fprintf(out, "dump %s: %d goroutines, %.1f MB, %d stuck watches planted (%s)\n", path, n, float64(res.Bytes)/1e6, len(res.Planted), how)

		ours := row{size: n, bytes: res.Bytes, tool: "watch-doctor analyze -o json"}
		gsp := row{size: n, bytes: res.Bytes, tool: "gostackparse.Parse"}
		for r := 0; r < smallRuns(o.runs, n); r++ {
			m, err := measure(o.gspTimeout, o.wd, "analyze", path, "-o", "json")
			if err != nil {
				return err
			}
			if err := checkOurs(m, res); err != nil {
				failures = append(failures, fmt.Sprintf("%s: watch-doctor: %v", sizeName(n), err))
			}
			ours.add(m)
			m, err = measure(o.gspTimeout, o.peers, "-parser", "gostackparse", path)
			if err != nil {
				return err
			}
			if err := checkPeer(m, n, &gsp); err != nil {
				failures = append(failures, fmt.Sprintf("%s: gostackparse: %v", sizeName(n), err))
			}
			gsp.add(m)
		}
		ours.startup, ours.startupCPU = startup, startupCPU
		if err := probeAllocs(&ours, path); err != nil {
			return err
		}
		// panicparse runs once: its Aggregate is quadratic here, so past
		// the time limit it is stopped and its figures become bounds.
		pp := row{size: n, bytes: res.Bytes, tool: "panicparse ScanSnapshot+Aggregate"}
		m, err := measure(o.ppTimeout, o.peers, "-parser", "panicparse", path)
		if err != nil {
			return err
		}
		if err := checkPeer(m, n, &pp); err != nil {
			failures = append(failures, fmt.Sprintf("%s: panicparse: %v", sizeName(n), err))
		}
		pp.add(m)
		rows = append(rows, ours, gsp, pp)
		fmt.Fprintln(out)
		printTable(out, []row{ours, gsp, pp})
		fmt.Fprintf(out, "ratios (watch-doctor throughput / peer's): vs gostackparse %s (wall), %s (CPU); vs panicparse %s (wall)\n\n",
			ratio(ours, gsp, false), ratio(ours, gsp, true), ratio(ours, pp, false))

		if n != o.sizes[len(o.sizes)-1] {
			continue
		}
		// The other ways a dump arrives: on stdin, and gzipped.
		gz, how, err := ensureGzip(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "the %s dump through stdin and gzipped (%s, %s)\n", sizeName(n), gz, how)
		stdin := row{size: n, bytes: res.Bytes, tool: "watch-doctor analyze - < FILE", startup: startup}
		gzr := row{size: n, bytes: res.Bytes, tool: "watch-doctor analyze FILE.gz", startup: startup}
		for r := 0; r < o.runs; r++ {
			m, err := measureIn(o.gspTimeout, path, o.wd, "analyze", "-", "-o", "json")
			if err != nil {
				return err
			}
			if err := checkOurs(m, res); err != nil {
				failures = append(failures, fmt.Sprintf("%s stdin: watch-doctor: %v", sizeName(n), err))
			}
			stdin.add(m)
			m, err = measure(o.gspTimeout, o.wd, "analyze", gz, "-o", "json")
			if err != nil {
				return err
			}
			if err := checkOurs(m, res); err != nil {
				failures = append(failures, fmt.Sprintf("%s gzip: watch-doctor: %v", sizeName(n), err))
			}
			gzr.add(m)
		}
		extra = append(extra, stdin, gzr)
		printTable(out, extra)
		fmt.Fprintln(out, "(MB and MB/s count uncompressed bytes)")
		fmt.Fprintln(out)
	}

	fmt.Fprintln(out, "summary")
	printTable(out, rows)
	fmt.Fprintln(out)

	// Targets, on the largest dump.
	var lastOurs, lastGsp, lastPP row
	for _, r := range rows {
		if r.size != o.sizes[len(o.sizes)-1] {
			continue
		}
		switch {
		case strings.HasPrefix(r.tool, "watch-doctor"):
			lastOurs = r
		case strings.HasPrefix(r.tool, "gostackparse"):
			lastGsp = r
		default:
			lastPP = r
		}
	}
	big := sizeName(lastOurs.size)
	verdict := func(ok bool, format string, a ...any) {
		s := fmt.Sprintf(format, a...)
		if ok {
			fmt.Fprintln(out, "PASS  "+s)
			return
		}
		fmt.Fprintln(out, "MISS  "+s)
		misses = append(misses, s)
	}
	rg := lastOurs.mbps(false) / lastGsp.mbps(false)
	verdict(rg >= targetVsGostackparse, "%s: whole command %.0f MB/s vs gostackparse parse-only %.0f MB/s = %.2fx wall (target >= %.1fx; CPU time: %.2fx)",
		big, lastOurs.mbps(false), lastGsp.mbps(false), rg, targetVsGostackparse, lastOurs.mbps(true)/lastGsp.mbps(true))
	rp := lastOurs.mbps(false) / lastPP.mbps(false)
	bound := ""
	if lastPP.timedOut {
		bound = fmt.Sprintf("; a lower bound: panicparse was stopped at the %s time limit", ms(o.ppTimeout))
	}
	verdict(rp >= targetVsPanicparse, "%s: whole command vs panicparse ScanSnapshot+Aggregate = %s%.1fx wall (target >= %.0fx%s)",
		big, geq(lastPP.timedOut), rp, targetVsPanicparse, bound)
	peak := lastOurs.maxRSS
	for _, r := range extra {
		peak = max(peak, r.maxRSS)
	}
	verdict(peak < targetPeakRSS, "%s: peak RSS %.1f MiB from a file, %s (target < %d MiB)", big, float64(lastOurs.maxRSS)/(1<<20), extraRSS(extra), targetPeakRSS>>20)
	var per, perCPU []string
	lo, hi, loCPU, hiCPU := 0.0, 0.0, 0.0, 0.0
	for _, r := range rows {
		if !strings.HasPrefix(r.tool, "watch-doctor") {
			continue
		}
		v, c := r.nsPerGoroutineNet(), r.cpuNsPerGoroutineNet()
		per = append(per, fmt.Sprintf("%s %.0f", sizeName(r.size), v))
		perCPU = append(perCPU, fmt.Sprintf("%s %.0f", sizeName(r.size), c))
		if lo == 0 || v < lo {
			lo = v
		}
		hi = max(hi, v)
		if loCPU == 0 || c < loCPU {
			loCPU = c
		}
		hiCPU = max(hiCPU, c)
	}
	verdict(hi/lo <= targetScaling, "scaling: ns/goroutine net of the %s startup: %s; max/min %.2fx (target <= %.1fx); in CPU time net of %s: %s, max/min %.2fx",
		ms(startup), strings.Join(per, ", "), hi/lo, targetScaling, ms(startupCPU), strings.Join(perCPU, ", "), hiCPU/loCPU)
	if len(failures) == 0 {
		fmt.Fprintf(out, "PASS  correctness: every run of every dump found exactly its planted stuck watches (%d in the %s dump), each linked to its handler, APF goroutine and connection, and no other finding; the peers read every goroutine\n", o.stuck, big)
	}
	for _, f := range failures {
		fmt.Fprintln(out, "FAIL  correctness: "+f)
	}
	fmt.Fprintf(out, "load average at the end: %s\n", loadavg())
	if len(failures) > 0 {
		return fmt.Errorf("%d correctness failures", len(failures))
	}
	if o.strict && len(misses) > 0 {
		return fmt.Errorf("%d targets missed", len(misses))
	}
	return nil
}

// ensureGzip writes path.gz (gzip, fastest level) unless it is there and
// was made from the same dump, as its sidecar says.
func ensureGzip(path string) (string, string, error) {
	gz := path + ".gz"
	src, err := os.ReadFile(path + ".json")
	if err != nil {
		return "", "", err
	}
	if b, err := os.ReadFile(gz + ".json"); err == nil && bytes.Equal(b, src) {
		if _, err := os.Stat(gz); err == nil {
			return gz, "reused", nil
		}
	}
	start := time.Now()
	in, err := os.Open(path)
	if err != nil {
		return "", "", err
	}
	defer in.Close()
	f, err := os.Create(gz + ".tmp")
	if err != nil {
		return "", "", err
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
	_, err = io.Copy(zw, in)
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(gz+".tmp", gz)
	}
	if err == nil {
		err = os.WriteFile(gz+".json", src, 0o644)
	}
	if err != nil {
		os.Remove(gz + ".tmp")
		return "", "", fmt.Errorf("writing %s: %w", gz, err)
	}
	return gz, "compressed in " + ms(time.Since(start)), nil
}

// smallRuns is how many runs a dump of n goroutines gets: more for small
// dumps, whose runs take milliseconds and whose best time is noisier (the
// scaling check subtracts the start-up time from them).
func smallRuns(runs, n int) int {
	if n >= 100_000 {
		return runs
	}
	return max(runs, 10)
}

func sizeName(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return strconv.Itoa(n)
}

func ms(d time.Duration) string {
	switch {
	case d >= 10*time.Second:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	}
	return fmt.Sprintf("%.1fms", float64(d.Microseconds())/1000)
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func firstLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
