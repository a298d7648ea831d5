// Command bench-live measures what each fetch of watch-doctor costs a real
// kube-apiserver v1.37.2 (make bench-live; not in CI).
//
// It starts etcd and kube-apiserver on loopback with the e2e harness
// (test/e2e/cluster), then, for each load level, opens idle watches (a
// namespace with no objects: each holds a handler and a cacheWatcher
// goroutine) and a few stuck ones (initial events of 500 pods of 20 KB to a
// client that reads nothing), and measures for each fetch kind (debug=2,
// debug=1, protobuf goroutine profiles, APF dump_requests, /metrics):
//   - the bytes of the answer;
//   - the wall time of the fetch;
//   - the longest stall seen by a probe that GETs /readyz every 5 ms on its
//     own connection while the fetch runs: the longest time any /readyz
//     request took, the one in flight when the fetch ended included.
//
// It prints a Markdown table for docs/diagnose.md ("Production scale").
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/watch-doctor/watch-doctor/test/e2e/cluster"
	"github.com/watch-doctor/watch-doctor/test/e2e/workload"
)

func main() {
	levels := flag.String("watches", "2000,5000,10000", "idle watches to open at each level, cumulative, comma-separated")
	stuck := flag.Int("stuck", 20, "stuck watches (initial events to a client that reads nothing)")
	runs := flag.Int("runs", 2, "fetches of each kind per level; the table shows the longest stall and the median wall time")
	soakFor := flag.Duration("soak", 0, "instead of the table: run kubectl watch-doctor serve ($WATCH_DOCTOR_BIN) this long against the last -watches level of idle watches, and report its RSS and the server's stop-the-world per look")
	soakInterval := flag.Duration("soak-interval", 10*time.Second, "serve's --interval during -soak")
	whole := flag.String("whole", "", "idle watches of the whole-run rows (collect then analyze by the plugin), cumulative, comma-separated; empty for none")
	wr := wholeRun{}
	flag.StringVar(&wr.plugin, "plugin", os.Getenv("WATCH_DOCTOR_BIN"), "the plugin binary, for the whole-run rows")
	flag.StringVar(&wr.interval, "interval", "70s", "the plugin's --interval in the whole-run rows")
	flag.StringVar(&wr.evidence, "evidence", "trace", "the plugin's --evidence in the whole-run rows")
	flag.StringVar(&wr.keep, "keep", "", "keep each whole-run row's bundle in this directory (idle-N, idle-N-load) instead of removing it")
	flag.Parse()
	if *whole != "" && wr.plugin == "" {
		fmt.Fprintln(os.Stderr, "bench-live: -whole needs -plugin or $WATCH_DOCTOR_BIN")
		os.Exit(2)
	}
	if *soakFor > 0 {
		ws := strings.Split(*levels, ",")
		n, err := strconv.Atoi(strings.TrimSpace(ws[len(ws)-1]))
		if err == nil {
			err = soak(*soakFor, *soakInterval, n, *stuck)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench-live: %v\n", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*levels, *whole, wr, *stuck, *runs); err != nil {
		fmt.Fprintf(os.Stderr, "bench-live: %v\n", err)
		os.Exit(1)
	}
}

// fetches are the kinds measured, with their paths.
var fetches = []struct{ name, path string }{
	{"debug=2", "/debug/pprof/goroutine?debug=2"},
	{"debug=1", "/debug/pprof/goroutine?debug=1"},
	{"protobuf", "/debug/pprof/goroutine"},
	{"APF dump_requests", "/debug/api_priority_and_fairness/dump_requests?includeRequestDetails=1"},
	{"/metrics", "/metrics"},
}

// counts parses a comma-separated list of counts; "" is none.
func counts(name, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if strings.TrimSpace(f) == "" {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("invalid -%s %q: want comma-separated counts", name, s)
		}
		out = append(out, n)
	}
	return out, nil
}

func run(levelsFlag, wholeFlag string, wr wholeRun, stuck, runs int) error {
	levels, err := counts("watches", levelsFlag)
	if err != nil {
		return err
	}
	wholeLevels, err := counts("whole", wholeFlag)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env, err := startLoaded(ctx, stuck)
	if err != nil {
		return err
	}
	defer env.stop()
	admin, load := env.admin, env.load
	// The fetches and the probe each get a client of their own.
	fetchClient, err := newClient(admin)
	if err != nil {
		return err
	}
	probeClient, err := newClient(admin)
	if err != nil {
		return err
	}
	if len(wholeLevels) > 0 {
		if err := wholeTable(ctx, env.c, wr, admin, load, fetchClient, probeClient, wholeLevels, env.stuckSince, logf); err != nil {
			return err
		}
	}
	if len(levels) == 0 {
		return nil
	}
	fmt.Println("| idle watches | go_goroutines | fetch | bytes | wall | longest /readyz stall |")
	fmt.Println("|---|---|---|---|---|---|")
	open := 0
	for _, n := range levels {
		logf("opening idle watches up to %d", n)
		if err := openIdle(ctx, load, admin.Host, n-open); err != nil {
			return err
		}
		open = n
		// Let the watches settle before measuring.
		time.Sleep(3 * time.Second)
		g, err := goroutines(ctx, fetchClient, admin.Host)
		if err != nil {
			return err
		}
		// The frames of the debug=1 profile, from which watch-doctor
		// estimates the debug=2 dump (internal/live/budget.go).
		prof, err := get(ctx, fetchClient, admin.Host+"/debug/pprof/goroutine?debug=1")
		if err != nil {
			return err
		}
		frames, total := profileFrames(prof)
		logf("level %d: debug=1 profile: %d goroutines, %d frames", n, total, frames)
		for _, f := range fetches {
			var walls []time.Duration
			var stall time.Duration
			var bytes int64
			for r := 0; r < runs; r++ {
				b, wall, st, err := measure(ctx, fetchClient, probeClient, admin.Host, f.path)
				if err != nil {
					return fmt.Errorf("%s at %d watches: %w", f.name, n, err)
				}
				bytes, stall = b, max(stall, st)
				walls = append(walls, wall)
			}
			sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
			fmt.Printf("| %d | %d | %s | %s | %s | %s |\n", n, g, f.name, size(bytes), walls[len(walls)/2].Round(time.Millisecond), stall.Round(time.Millisecond))
		}
	}
	return nil
}

// profileFrames counts the frames of a debug=1 profile: each block "N @
// pc..." is N goroutines, each "#\t0x..." line one frame of them.
func profileFrames(b []byte) (frames, goroutines int) {
	count := 0
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.Contains(l, " @ "):
			count, _ = strconv.Atoi(strings.Fields(l)[0])
			goroutines += count
		case strings.HasPrefix(l, "#\t0x"):
			frames += count
		}
	}
	return frames, goroutines
}

// loaded is a cluster with stuck watches open, and the client for more.
type loaded struct {
	c     *cluster.Cluster
	dir   string
	admin *rest.Config
	// load is the watches' own client: one transport shared by all
	// (HTTP/2, new connections as streams run out).
	load *http.Client
	// stuckSince is when the last stuck watch was opened.
	stuckSince time.Time
}

func (l *loaded) stop() {
	l.c.Stop()
	os.RemoveAll(l.dir)
}

// startLoaded starts etcd and kube-apiserver on loopback, with 500 pods
// of 20 KB and stuck watches of them (initial events to a client that
// reads nothing) until ctx ends.
func startLoaded(ctx context.Context, stuck int) (*loaded, error) {
	dir, err := os.MkdirTemp("", "watch-doctor-bench-live-")
	if err != nil {
		return nil, err
	}
	c, err := cluster.Start(ctx, cluster.Options{Dir: dir, Logf: logf,
		// Room for many watches per connection and for the load's own
		// requests.
		ExtraAPIServerArgs: []string{"--http2-max-streams-per-connection=2000", "--max-requests-inflight=2000", "--max-mutating-requests-inflight=1000"}})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	l := &loaded{c: c, dir: dir}
	if err := l.fill(ctx, stuck); err != nil {
		l.stop()
		return nil, err
	}
	return l, nil
}

func (l *loaded) fill(ctx context.Context, stuck int) error {
	admin, err := l.c.RESTConfig(cluster.UserAdmin)
	if err != nil {
		return err
	}
	admin.QPS, admin.Burst = 5000, 5000
	cs, err := kubernetes.NewForConfig(admin)
	if err != nil {
		return err
	}
	logf("creating 500 pods of 20 KB for the stuck watches")
	if err := workload.CreatePods(ctx, cs, workload.PodsOptions{Namespace: "stuck", Count: 500, AnnotationBytes: 20 * 1024, Workers: 16}); err != nil {
		return err
	}
	load, err := rest.HTTPClientFor(admin)
	if err != nil {
		return err
	}
	for i := 0; i < stuck; i++ {
		if err := openWatch(ctx, load, admin.Host, "/api/v1/namespaces/stuck/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=3600"); err != nil {
			return fmt.Errorf("stuck watch %d: %w", i, err)
		}
	}
	l.admin, l.load, l.stuckSince = admin, load, time.Now()
	return nil
}

func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, "bench-live: "+format+"\n", args...) }

func newClient(cfg *rest.Config) (*http.Client, error) {
	c := rest.CopyConfig(cfg)
	// A transport of its own: not the cached one the load uses.
	c.Proxy = http.ProxyFromEnvironment
	return rest.HTTPClientFor(c)
}

// openIdle opens n idle watches, 64 at a time.
func openIdle(ctx context.Context, c *http.Client, host string, n int) error {
	sem := make(chan struct{}, 64)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := openWatch(ctx, c, host, "/api/v1/namespaces/idle/configmaps?watch=1&timeoutSeconds=3600"); err != nil {
				select {
				case errs <- err:
				default:
				}
			}
		}()
	}
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

// openWatch starts a watch and leaves its body unread until ctx ends.
func openWatch(ctx context.Context, c *http.Client, host, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, host+path, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		return fmt.Errorf("GET %s: HTTP %d: %s", path, resp.StatusCode, b)
	}
	go func() {
		<-ctx.Done()
		resp.Body.Close()
	}()
	return nil
}

func goroutines(ctx context.Context, c *http.Client, host string) (int, error) {
	b, err := get(ctx, c, host+"/metrics")
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "go_goroutines "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return int(f), err
		}
	}
	return 0, fmt.Errorf("no go_goroutines in /metrics")
}

func get(ctx context.Context, c *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: HTTP %d", url, resp.StatusCode)
	}
	return b, err
}

// measure fetches path once while the probe GETs /readyz every 5 ms, and
// returns the bytes, the wall time and the probe's longest request.
func measure(ctx context.Context, fc, pc *http.Client, host, path string) (int64, time.Duration, time.Duration, error) {
	var n int64
	var wall time.Duration
	stall, err := probeDuring(ctx, pc, host, func() error {
		start := time.Now()
		b, err := get(ctx, fc, host+path)
		wall, n = time.Since(start), int64(len(b))
		return err
	})
	return n, wall, stall, err
}

func size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
