package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"

	"github.com/watch-doctor/watch-doctor/test/e2e/cluster"
)

// Whole-run rows (issue 18): for each level of idle watches, with and
// without background request load, one `collect` by the plugin (as
// diagnose reads, plus the bundle), then `analyze` of its bundle, and:
//   - the longest stall of a /readyz probe every 5 ms during the collect;
//   - the stop-the-world the runtime counted over the collect
//     (go_sched_pauses_total_other_seconds, the whole process's), and the
//     part of it spent stopping (go_sched_pauses_stopping_other_seconds);
//   - the execution trace's bytes per second, beside the rate the plugin
//     estimated from its 1 s probe and the window it asked for;
//   - the plugin's peak RSS during the collect (it parses the trace as it
//     streams), and the wall time and peak RSS of analyze, which parses the
//     saved trace.out offline: the parse time. Peak RSS is GNU time's
//     (gnuTime), the plugin's own.

// wholeRun is the configuration of the whole-run rows.
type wholeRun struct {
	plugin   string
	interval string
	evidence string
	// keep, when set, is a directory the bundles are kept in (one per row,
	// "idle-N" or "idle-N-load"), for offline work; otherwise they are
	// removed after the row.
	keep string
}

// wholeRow runs collect then analyze once and prints the row.
func wholeRow(ctx context.Context, c *cluster.Cluster, wr wholeRun, admin *rest.Config, fetch, probe *http.Client, idle int, loaded bool) error {
	bundle, cleanup, err := rowBundle(wr.keep, idle, loaded)
	if err != nil {
		return err
	}
	defer cleanup()
	g, err := goroutines(ctx, fetch, admin.Host)
	if err != nil {
		return err
	}
	stopLoad := func() {}
	if loaded {
		stopLoad = backgroundLoad(ctx, fetch, admin.Host)
	}
	before, err := pauses(ctx, fetch, admin.Host)
	if err != nil {
		stopLoad()
		return err
	}
	u, _ := parseHost(admin.Host)
	var collect runStats
	stall, err := probeDuring(ctx, probe, admin.Host, func() error {
		collect, err = runPluginStats(ctx, wr.plugin, c.Kubeconfig(cluster.UserWatchDoctor), "collect", "--apiserver", u, "--interval", wr.interval, "--evidence", wr.evidence, "-d", bundle)
		return err
	})
	after, perr := pauses(ctx, fetch, admin.Host)
	stopLoad()
	if err != nil {
		return fmt.Errorf("collect at %d idle watches: %w", idle, err)
	}
	if perr != nil {
		return perr
	}
	an, err := runPluginStats(ctx, wr.plugin, c.Kubeconfig(cluster.UserWatchDoctor), "analyze", bundle, "-o", "json")
	if err != nil && an.exit != 1 && an.exit != 2 {
		return fmt.Errorf("analyze at %d idle watches: %w", idle, err)
	}
	rate := traceRate(bundle) + traceEstimate(collect.stderr)
	load := "no"
	if loaded {
		load = "yes"
	}
	fmt.Printf("| %d | %s | %d | %s | %d, %.3f ms (%.3f ms stopping) | %s | %s | %s, %s | %s |\n", idle, load, g, stall.Round(time.Millisecond),
		after.count-before.count, (after.sum-before.sum)*1e3, (after.stopping-before.stopping)*1e3, rate, size(collect.maxRSS), an.wall.Round(10*time.Millisecond), size(an.maxRSS), verdict(an.stdout))
	return nil
}

// rowBundle names the bundle directory of one row (collect creates it)
// and what removes it after the row: nothing when keep is set.
func rowBundle(keep string, idle int, loaded bool) (string, func(), error) {
	if keep != "" {
		name := fmt.Sprintf("idle-%d", idle)
		if loaded {
			name += "-load"
		}
		return filepath.Join(keep, name), func() {}, os.MkdirAll(keep, 0o700)
	}
	dir, err := os.MkdirTemp("", "bench-live-bundle-")
	if err != nil {
		return "", nil, err
	}
	return filepath.Join(dir, "b"), func() { os.RemoveAll(dir) }, nil
}

// runStats is what one run of the plugin cost on this side.
type runStats struct {
	wall   time.Duration
	maxRSS int64
	exit   int
	stdout string
	stderr string
}

// gnuTime is GNU time, through which each plugin run's peak RSS is taken.
// A child's ru_maxrss starts from the RSS of the process that spawned it
// (Linux keeps the old address space's high-water mark at exec), so read
// straight from this harness, which holds thousands of watches, it was
// this harness's RSS (200 to 400 MiB), not the plugin's; GNU time is small
// (bench/cmd/wdbench measures the same way).
const gnuTime = "/usr/bin/time"

func runPluginStats(ctx context.Context, bin, kubeconfig string, args ...string) (runStats, error) {
	rss, err := os.CreateTemp("", "bench-live-rss-")
	if err != nil {
		return runStats{}, err
	}
	rss.Close()
	defer os.Remove(rss.Name())
	cmd := exec.CommandContext(ctx, gnuTime, append([]string{"-f", "%M", "-o", rss.Name(), bin}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err = cmd.Run()
	st := runStats{wall: time.Since(start), stdout: out.String(), stderr: errOut.String()}
	if ps := cmd.ProcessState; ps != nil {
		st.exit = ps.ExitCode() // GNU time exits with the plugin's code
	}
	kib, perr := lastInt(rss.Name())
	st.maxRSS = kib << 10
	if err != nil {
		return st, fmt.Errorf("%s %s: %w\n%s", filepath.Base(bin), args[0], err, errOut.String())
	}
	if perr != nil {
		return st, fmt.Errorf("%s %s: peak RSS from %s: %w", filepath.Base(bin), args[0], gnuTime, perr)
	}
	return st, nil
}

// lastInt reads the number on the last line of GNU time's output file
// (after "Command exited with non-zero status N" when there is one).
func lastInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strconv.ParseInt(strings.TrimSpace(lines[len(lines)-1]), 10, 64)
}

// traceRate reads the trace's bytes and duration from the manifest.
func traceRate(bundle string) string {
	b, err := os.ReadFile(filepath.Join(bundle, "manifest.json"))
	if err != nil {
		return "-"
	}
	var m struct {
		Instances []struct {
			Trace *struct {
				Bytes    int64  `json:"bytes"`
				Duration string `json:"duration"`
			} `json:"trace"`
		} `json:"instances"`
	}
	if json.Unmarshal(b, &m) != nil || len(m.Instances) == 0 || m.Instances[0].Trace == nil {
		return "no trace"
	}
	tr := m.Instances[0].Trace
	d, err := time.ParseDuration(tr.Duration)
	if err != nil || d <= 0 {
		return size(tr.Bytes)
	}
	return fmt.Sprintf("%s/s (%s in %s)", size(int64(float64(tr.Bytes)/d.Seconds())), size(tr.Bytes), d.Round(time.Second))
}

// estimateLine is the plugin's progress line choosing the trace's window
// (internal/live tracefetch.go): the rate estimated from the probe's
// generations, and the probe's own.
var estimateLine = regexp.MustCompile(`execution trace: (\S+) at an estimated (\S+ MiB)/s \(the probe: (\S+ MiB)/s`)

// traceEstimate is what the probe estimated, to print beside the rate
// measured over the whole trace: "; estimated 1.2 MiB/s for 1m10s (probe
// 2.6 MiB/s)", "" when collect did not say.
func traceEstimate(stderr string) string {
	m := estimateLine.FindStringSubmatch(stderr)
	if m == nil {
		return ""
	}
	return fmt.Sprintf("; estimated %s/s for %s (probe %s/s)", m[2], m[1], m[3])
}

// verdict summarises analyze's report: stuck, slow and undecided watches.
func verdict(report string) string {
	var r struct {
		Summary struct{ StuckWatches, SlowWatches, UndecidedWatches int } `json:"summary"`
	}
	if json.Unmarshal([]byte(report), &r) != nil {
		return "-"
	}
	return fmt.Sprintf("%d stuck, %d slow, %d undecided", r.Summary.StuckWatches, r.Summary.SlowWatches, r.Summary.UndecidedWatches)
}

type pauseReading struct {
	count uint64
	sum   float64
	// stopping is go_sched_pauses_stopping_other_seconds_sum: the part of
	// the pauses spent stopping the world (every running thread brought
	// to a safe point), before the work the pause is for.
	stopping float64
}

// pauses reads go_sched_pauses_total_other_seconds' count and sum, and
// go_sched_pauses_stopping_other_seconds' sum.
func pauses(ctx context.Context, c *http.Client, host string) (pauseReading, error) {
	b, err := get(ctx, c, host+"/metrics")
	if err != nil {
		return pauseReading{}, err
	}
	var p pauseReading
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "go_sched_pauses_total_other_seconds_sum "); ok {
			p.sum, _ = strconv.ParseFloat(v, 64)
		}
		if v, ok := strings.CutPrefix(l, "go_sched_pauses_stopping_other_seconds_sum "); ok {
			p.stopping, _ = strconv.ParseFloat(v, 64)
		}
		if v, ok := strings.CutPrefix(l, "go_sched_pauses_total_other_seconds_count "); ok {
			p.count, _ = strconv.ParseUint(v, 10, 64)
		}
	}
	return p, nil
}

// backgroundLoad lists the stuck namespace's pods' metadata and reads
// /version from 8 workers until stopped: request load of its own.
func backgroundLoad(ctx context.Context, c *http.Client, host string) (stop func()) {
	lctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			path := "/version"
			if i%2 == 0 {
				path = "/api/v1/namespaces/stuck/configmaps?limit=50"
			}
			for lctx.Err() == nil {
				get(lctx, c, host+path)
			}
		}(i)
	}
	return func() { cancel(); wg.Wait() }
}

// probeDuring runs f while a probe GETs /readyz every 5 ms, and returns
// the probe's longest request (the one in flight when f ended included).
func probeDuring(ctx context.Context, pc *http.Client, host string, f func() error) (time.Duration, error) {
	if _, err := get(ctx, pc, host+"/readyz"); err != nil {
		return 0, err
	}
	stop := make(chan struct{})
	result := make(chan time.Duration)
	go func() {
		var longest time.Duration
		for {
			start := time.Now()
			done := make(chan struct{})
			go func() { get(ctx, pc, host+"/readyz"); close(done) }()
			select {
			case <-done:
				longest = max(longest, time.Since(start))
			case <-stop:
				<-done
				result <- max(longest, time.Since(start))
				return
			}
			select {
			case <-stop:
				result <- longest
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	err := f()
	close(stop)
	return <-result, err
}

func parseHost(host string) (string, error) {
	return strings.TrimPrefix(strings.TrimPrefix(host, "https://"), "http://"), nil
}

// wholeTable prints the whole-run rows, opening idle watches up to each
// level; they are closed when it returns, so the per-fetch table after it
// starts from none.
func wholeTable(ctx context.Context, c *cluster.Cluster, wr wholeRun, admin *rest.Config, load, fetch, probe *http.Client, levels []int, stuckSince time.Time, logf func(string, ...any)) error {
	idle, closeIdle := context.WithCancel(ctx)
	defer closeIdle()
	fmt.Printf("Whole runs: collect --evidence %s --interval %s, then analyze of its bundle.\n\n", wr.evidence, wr.interval)
	fmt.Println("| idle watches | background load | go_goroutines | longest /readyz stall | runtime stop-the-world (pauses, total, of it stopping) | trace | collect peak RSS | analyze (parse) time, peak RSS | verdicts |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	// The cheap look takes no trace while every initializing watch is
	// younger than the stall bound (30 s, kubernetes PR 141899): the first
	// row waits until the stuck watches are older than that.
	if wait := time.Until(stuckSince.Add(35 * time.Second)); wait > 0 {
		logf("whole runs: waiting %s for the stuck watches to pass the 30s stall bound", wait.Round(time.Second))
		time.Sleep(wait)
	}
	open := 0
	for _, n := range levels {
		logf("whole runs: opening idle watches up to %d", n)
		if err := openIdle(idle, load, admin.Host, n-open); err != nil {
			return err
		}
		open = n
		for _, loaded := range []bool{false, true} {
			logf("whole run: %d idle watches, background load %v", n, loaded)
			if err := wholeRow(ctx, c, wr, admin, fetch, probe, n, loaded); err != nil {
				return err
			}
		}
	}
	fmt.Println()
	return nil
}
