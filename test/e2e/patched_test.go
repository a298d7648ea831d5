package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"k8s.io/client-go/rest"

	"github.com/watch-doctor/watch-doctor/test/e2e/cluster"
	"github.com/watch-doctor/watch-doctor/test/e2e/h2sniff"
	"github.com/watch-doctor/watch-doctor/test/e2e/probe"
	"github.com/watch-doctor/watch-doctor/test/e2e/workload"
)

// Environment of the patched-server tests (test/e2e/run.sh exports the
// binary; the others are optional).
const (
	// envPatchedBin is the kube-apiserver built with test/e2e/patches
	// (hack/build-binaries.sh prints it).
	envPatchedBin = "KUBE_APISERVER_PATCHED_BIN"
	// envStallTimeout is the no-progress timeout given to the patched
	// server (default 10s; PR 141899 describes 30s).
	envStallTimeout = "E2E_STALL_TIMEOUT"
	// envPatchedPods is the number of pods of the patched-server clusters
	// (default 600: ~12 MB, more than the client's 4 MB stream window plus
	// the server's buffers, so the slow informer's watcher stalls).
	envPatchedPods = "E2E_PATCHED_PODS"
	// envObserve is how long each patched-server test watches after the
	// clients started (default: the stall timeout + 20s).
	envObserve = "E2E_PATCHED_OBSERVE"
	// envCaptureDir, when set, makes the pr141899 run write one capture in
	// the layout of /work/shared/fixtures (goroutine dumps, APF dumps,
	// metrics, version, captured-at) into that directory at the end of
	// its observation.
	envCaptureDir = "E2E_CAPTURE_DIR"
)

// Modes of the patched binary ($WATCH_DOCTOR_STALL_FIX).
const (
	modeOff      = "off"
	modePR141899 = "pr141899"
	modeComplete = "complete"
)

const (
	// samplePeriod is how often a run samples the server.
	samplePeriod = 2 * time.Second
	// settle is how long after the server's stall log line the effects of
	// the stall must be visible (one sample period and a margin).
	settle = 2*samplePeriod + time.Second
)

// stallSample is the server's state at one instant of a run.
type stallSample struct {
	// At is the time since the clients started.
	At time.Duration
	// Senders are the goroutines in sendWatchCacheEvent called from
	// processInterval (initial-events watchers not keeping up) of the
	// HTTP/2 clients (the slow informer and the paced reader).
	Senders int
	// Writers are their watch handlers ((*WatchServer).HandleHTTP)
	// blocked in writeDataFromHandler, of watches still in their initial
	// events (probe.InitialEventsHandlers).
	Writers int
	// Goroutines are the watch goroutines of each transport
	// (timeseries_test.go); Senders and Writers are those of HTTP/2.
	Goroutines map[string]probe.WatchGoroutines
	// UserSeats are the initial seats of each client's watch that
	// dump_requests lists as executing.
	UserSeats map[string]float64
	// Node is the node reader's connection, client side.
	Node nodeSocket
	// SlowExecuting and PacedExecuting say whether dump_requests lists
	// the client's watch as executing (holding seats).
	SlowExecuting, PacedExecuting bool
	// Seats is apiserver_flowcontrol_current_executing_seats of the
	// clients' priority level.
	Seats float64
}

func (s stallSample) String() string {
	h1 := s.Goroutines[transportH1]
	return fmt.Sprintf("t=%5.1fs senders=%d writers=%d slow-informer-executing=%t paced-reader-executing=%t seats=%g | HTTP/1.1 node-reader: watchers=%d writers=%d apf-waits=%d executing=%t socket=%s recv-q=%d server-socket=%s send-q=%d",
		s.At.Seconds(), s.Senders, s.Writers, s.SlowExecuting, s.PacedExecuting, s.Seats,
		h1.Watchers, h1.Writers, h1.APFWaits, s.UserSeats[cluster.UserNodeReader] > 0, s.Node.State, s.Node.RecvQ, s.Node.ServerState, s.Node.ServerSendQ)
}

// stallRun is what one run of the seed reproduction on a patched server
// measured.
type stallRun struct {
	cluster *cluster.Cluster
	// release is the kube-apiserver release the patched binary is of.
	release string
	mode    string
	timeout time.Duration
	// observed is how long the clients were watched: observe, or longer
	// when the node reader's watch arrived late (runStallScenario).
	observed time.Duration
	samples  []stallSample
	// stalls are the server's "closing it" log lines, as the time since
	// the clients started.
	stalls []time.Duration
	// streamEnds is what the slow informer's transport received.
	streamEnds []h2sniff.End
	started    time.Time
	// pacedBefore/pacedAfter are the paced reader's event counts at the
	// first and last sample; pacedErr why its watch ended, if it did.
	pacedBefore, pacedAfter int64
	pacedErr                error
	slowEvents              int64
	// arrived is when each client's watch arrived (dump_requests'
	// ArriveTime), as the time since the clients started.
	arrived map[string]time.Duration
	// nodeStdout/nodeStderr are what the node reader printed.
	nodeStdout, nodeStderr string
}

// TestPatchedServers runs the seed reproduction (slow-informer stuck after
// one event, paced-reader at one event per 400 ms) on the patched
// kube-apiserver in each mode, at the same time, each on its own cluster,
// and checks what each frees:
//   - off: nothing (the unpatched behaviour);
//   - pr141899: the slow informer's cacheWatcher goroutine, at the timeout;
//     its handler stays blocked writing and its APF seat stays held, and
//     its client is not told;
//   - complete: the watcher, the handler and the seat, and the client's
//     transport receives RST_STREAM.
//
// In every mode the paced reader keeps its watch and keeps reading; the
// node reader (HTTP/1.1), stopped after one event, is never told, complete
// or not: its FIN waits behind the bytes it does not read.
//
// It runs on each patched release (patchedReleases): v1.37.2, and
// v1.38.0-beta.0 with our rebase of the patch onto 1.38's watcher loop
// (process reads the interval from its input and replays it in
// processInitialEvents); the replay it is compared with is then a 1.38
// scenario (release: v1.38). Run one release alone with
// -run 'TestPatchedServers/v1.38.0-beta.0'.
func TestPatchedServers(t *testing.T) {
	rels := patchedReleases(t)
	timeout := envDuration(t, envStallTimeout, 10*time.Second)
	observe := envDuration(t, envObserve, timeout+20*time.Second)
	if least := nodeStartAfter + samplePeriod + timeout + settle + samplePeriod; observe < least {
		t.Fatalf("$%s=%v: observe at least %v (the node reader starts %v in; then the stall timeout %v, then settle)", envObserve, observe, least, nodeStartAfter, timeout)
	}
	pods := 600
	if v := os.Getenv(envPatchedPods); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("$%s=%q: want a positive number of pods", envPatchedPods, v)
		}
		pods = n
	}
	// One release after the other (each release's three clusters at
	// once): the checks are timed to a sample period, and six clusters at
	// once on two cores would blur them.
	for _, rel := range rels {
		t.Run(rel.version, func(t *testing.T) {
			for _, mode := range []string{modeOff, modePR141899, modeComplete} {
				t.Run(mode, func(t *testing.T) {
					t.Parallel()
					run := runStallScenario(t, rel.bin, mode, timeout, observe, pods)
					run.release = rel.version
					for _, s := range run.samples {
						t.Logf("%s", s)
					}
					t.Logf("%s: server stall lines at %v; slow informer's transport: %v; paced reader %d -> %d events; slow informer %d events; watches arrived at %v; node reader printed %q",
						rel.version, run.stalls, run.streamEnds, run.pacedBefore, run.pacedAfter, run.slowEvents, run.arrived, run.nodeStdout+run.nodeStderr)
					checkStallRun(t, run)
					compareWithReplay(t, run.cluster, run, pods, run.observed)
				})
			}
		})
	}
}

// checkStallRun asserts what run.mode must free and what it must keep.
func checkStallRun(t *testing.T, run stallRun) {
	t.Helper()
	// Common to all modes: the paced reader is never cut and progresses;
	// the slow informer read exactly one event.
	if run.pacedErr != nil {
		t.Errorf("paced reader's watch ended: %v", run.pacedErr)
	}
	if run.pacedAfter <= run.pacedBefore {
		t.Errorf("paced reader did not progress: %d -> %d events", run.pacedBefore, run.pacedAfter)
	}
	if run.slowEvents != 1 {
		t.Errorf("slow informer received %d events, want 1", run.slowEvents)
	}
	if n := strings.Count(run.nodeStdout, "first event"); n != 1 {
		t.Errorf("node reader printed %d first events (want 1), stderr %q", n, run.nodeStderr)
	}
	for _, s := range run.samples {
		if !s.PacedExecuting {
			t.Errorf("%s: paced reader's watch not executing (it never leaves the initial phase in this run)", s)
		}
	}
	// Both watchers fill their streams within a sample period or two of
	// the start; before the stall both are blocked sending.
	reproduced := slices.ContainsFunc(run.samples, func(s stallSample) bool {
		return s.Senders == 2 && s.SlowExecuting && (len(run.stalls) == 0 || s.At < run.stalls[0])
	})
	if !reproduced {
		t.Fatalf("no sample shows both initial-events watchers blocked sending and slow-informer executing before any stall; first: %v", first(run.samples))
	}

	// The node reader (HTTP/1.1) read one event and stopped: in no mode
	// is it told (its socket stays ESTABLISHED).
	for _, s := range run.samples {
		if s.Node.told() {
			t.Errorf("%s: the node reader was told (its socket left ESTABLISHED), want never: it does not read", s)
		}
	}

	if run.mode == modeOff {
		if len(run.stalls) != 0 {
			t.Errorf("mode off logged stalls at %v", run.stalls)
		}
		for _, s := range run.samples {
			if s.At < settle {
				continue
			}
			if s.Senders != 2 || !s.SlowExecuting || s.Writers < 1 {
				t.Errorf("%s: mode off must keep the slow informer's watcher, handler and seat", s)
			}
		}
		if len(run.streamEnds) != 0 {
			t.Errorf("mode off: slow informer's stream ended: %v", run.streamEnds)
		}
		return
	}

	if len(run.stalls) != 2 {
		t.Fatalf("%s: server logged %d stalls (%v), want exactly 2 (the slow informer's, then the node reader's, which starts %v later)", run.mode, len(run.stalls), run.stalls, nodeStartAfter)
	}
	stall := run.stalls[0]
	// The timer starts at the watcher's last successful send, a moment
	// after the watch opened.
	if stall < run.timeout || stall > run.timeout+5*time.Second {
		t.Errorf("stall logged at %v after the clients started, want within [%v, %v]", stall, run.timeout, run.timeout+5*time.Second)
	}
	var after []stallSample
	for _, s := range run.samples {
		if s.At >= stall+settle {
			after = append(after, s)
		}
	}
	if len(after) == 0 {
		t.Fatalf("no sample %v after the stall at %v", settle, stall)
	}
	// The seats of the two HTTP/2 watches, before the stall (from
	// dump_requests: the priority level's metric counts the node reader's
	// too; replay_vs_real_test.go compares the metric over time).
	h2Seats := func(s stallSample) float64 {
		return s.UserSeats[cluster.UserSlowInformer] + s.UserSeats[cluster.UserPacedReader]
	}
	base := h2Seats(run.samples[0])
	for _, s := range run.samples {
		if s.At < stall {
			base = max(base, h2Seats(s))
		}
	}
	for _, s := range after {
		if s.Senders != 1 {
			t.Errorf("%s: want only the paced reader's watcher left in processInterval", s)
		}
		switch run.mode {
		case modePR141899:
			if !s.SlowExecuting || s.Writers < 1 || h2Seats(s) < base {
				t.Errorf("%s: pr141899 must leave the slow informer's handler blocked and its seat held (seats at start %g)", s, base)
			}
		case modeComplete:
			if s.SlowExecuting || s.Writers > 1 || h2Seats(s) >= base {
				t.Errorf("%s: complete must free the slow informer's handler and seat (seats at start %g)", s, base)
			}
		}
	}
	// Under complete the node reader's handler write fails at its stall
	// and net/http closes the connection, but the server's FIN waits
	// behind the bytes the client does not read (FIN_WAIT1, a send queue
	// left): the client is not told (above).
	for _, s := range run.samples {
		if run.mode == modeComplete && s.At >= run.stalls[1]+settle && (s.Node.ServerState != "FIN_WAIT1" || s.Node.ServerSendQ == 0) {
			t.Errorf("%s: complete: want the server's end of the node reader's connection in FIN_WAIT1 with unsent bytes after its stall at %v", s, run.stalls[1])
		}
	}
	switch run.mode {
	case modePR141899:
		if len(run.streamEnds) != 0 {
			t.Errorf("pr141899: the slow informer's transport was told: %v", run.streamEnds)
		}
	case modeComplete:
		if len(run.streamEnds) != 1 || !run.streamEnds[0].Reset || run.streamEnds[0].Code != http2.ErrCodeInternal {
			t.Fatalf("complete: slow informer's transport saw %v, want one RST_STREAM INTERNAL_ERROR", run.streamEnds)
		}
		// Within one sampling period: the reset is sent at the stall, but
		// the stall's log line and the client's receipt are stamped by
		// different processes on a loaded machine (measured: 0.1 to
		// 1.2 s, the latter at load 16 on 2 cores).
		told := run.streamEnds[0].At.Sub(run.started)
		if told < stall || told > stall+samplePeriod {
			t.Errorf("complete: client told at %v, want within %v after the stall at %v", told, samplePeriod, stall)
		}
	}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func first(s []stallSample) any {
	if len(s) == 0 {
		return "none"
	}
	return s[0]
}

// runStallScenario starts a cluster on the patched binary in mode, creates
// the pods, starts the slow informer (through h2sniff) and the paced reader,
// and samples the server every samplePeriod for observe.
func runStallScenario(t *testing.T, bin, mode string, timeout, observe time.Duration, pods int) stallRun {
	t.Helper()
	c := cluster.StartForTest(t, cluster.Options{
		KubeAPIServerBin: bin,
		APIServerEnv: []string{
			"WATCH_DOCTOR_STALL_FIX=" + mode,
			"WATCH_DOCTOR_STALL_TIMEOUT=" + timeout.String(),
		},
	})
	admin, err := c.LoaderClientset(500)
	if err != nil {
		t.Fatal(err)
	}
	podOpts := workload.DefaultPodsOptions()
	podOpts.Count = pods
	began := time.Now()
	if err := workload.CreatePods(context.Background(), admin, podOpts); err != nil {
		t.Fatal(err)
	}
	t.Logf("created %d pods in %v", pods, time.Since(began).Round(time.Millisecond))

	slowCfg, err := c.RESTConfig(cluster.UserSlowInformer)
	if err != nil {
		t.Fatal(err)
	}
	slowCfg, rec, err := h2sniff.Config(slowCfg)
	if err != nil {
		t.Fatal(err)
	}
	pacedCfg, err := c.RESTConfig(cluster.UserPacedReader)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	run := stallRun{cluster: c, mode: mode, timeout: timeout, started: time.Now()}
	slow, err := workload.StartSlowInformer(ctx, slowCfg, podOpts.Namespace)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	paced, err := workload.StartPacedReader(ctx, pacedCfg, podOpts.Namespace, 400*time.Millisecond)
	if err != nil {
		cancel()
		workload.StopAll(slow)
		t.Fatal(err)
	}
	// Stop the clients before the cluster (cleanups run last-in first-out).
	var node *nodeWatch
	t.Cleanup(func() {
		cancel()
		workload.StopAll(slow, paced)
		if node != nil {
			node.stop()
		}
	})

	rc := admin.Discovery().RESTClient()
	level := ""
	deadline := run.started.Add(observe)
	tick := time.NewTicker(samplePeriod)
	defer tick.Stop()
	run.arrived = map[string]time.Duration{}
	var sock nodeSocket
	for {
		// The node reader (HTTP/1.1) starts later than the others, so
		// that its stall comes after the slow informer's and the server's
		// log lines tell them apart.
		if node == nil && time.Since(run.started) >= nodeStartAfter {
			if node, err = startNodeWatch(t, c, podOpts.Namespace); err != nil {
				t.Fatal(err)
			}
		}
		s, lvl, err := sampleStall(ctx, rc, run.started, podOpts.Namespace, level, run.arrived)
		if err != nil {
			t.Fatalf("sample at %v: %v", time.Since(run.started).Round(time.Millisecond), err)
		}
		level = lvl
		if node != nil {
			if sock, err = node.socket(sock); err != nil {
				t.Fatalf("sample at %v: %v", s.At.Round(time.Millisecond), err)
			}
			s.Node = sock
		}
		if len(run.samples) == 0 {
			run.pacedBefore = paced.Events()
		}
		run.samples = append(run.samples, s)
		// The node reader's stall comes the stall timeout after its watch
		// arrives, and its Node process can take many seconds to start on
		// loaded cores (in CI beside make test: started at 6 s, its watch
		// arrived at 20.4 s). Watch until that stall has settled, or keep
		// waiting for the watch, up to a minute past observe.
		if at, ok := run.arrived[cluster.UserNodeReader]; ok {
			deadline = later(deadline, run.started.Add(at+timeout+settle+samplePeriod))
		} else if node != nil {
			deadline = later(deadline, time.Now().Add(samplePeriod))
		}
		if now := time.Now(); now.After(deadline) || now.After(run.started.Add(observe+time.Minute)) {
			break
		}
		<-tick.C
	}
	run.observed = max(observe, run.samples[len(run.samples)-1].At)
	run.pacedAfter = paced.Events()
	run.pacedErr = paced.Err()
	run.slowEvents = slow.Events()
	run.streamEnds = rec.Ends()
	if node != nil {
		run.nodeStdout, run.nodeStderr, _ = node.output()
	}
	if dir := os.Getenv(envCaptureDir); dir != "" && mode == modePR141899 {
		if err := cluster.CaptureBundle(ctx, rc, dir); err != nil {
			t.Errorf("capture into %s: %v", dir, err)
		} else {
			t.Logf("captured the server's state into %s at %v after the clients started", dir, time.Since(run.started).Round(time.Second))
		}
	}
	_, logPath := c.LogFiles()
	run.stalls, err = stallLines(logPath, run.started)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// sampleStall reads the server's goroutines, APF requests and seat metric.
// level is the clients' priority level, found in the first sample.
// arrived gets each client's arrival time (since started) when first seen.
func sampleStall(ctx context.Context, rc rest.Interface, started time.Time, namespace, level string, arrived map[string]time.Duration) (stallSample, string, error) {
	s := stallSample{At: time.Since(started), UserSeats: map[string]float64{}}
	gs, err := goroutines(ctx, rc)
	if err != nil {
		return s, level, err
	}
	s.Goroutines = probe.CountWatchGoroutines(gs)
	s.Senders = s.Goroutines[transportH2].Watchers
	// x/net's HTTP/2 server (v1.37.2), or the one Go 1.27's net/http
	// carries (v1.38.0-beta.0).
	writers := append(probe.BlockedIn(gs, probe.WriteDataFromHandler), probe.BlockedIn(gs, probe.StdWriteDataFromHandler)...)
	initial := probe.InitialEventsHandlers(gs)
	for _, g := range writers {
		if initial[g.ID] && slices.ContainsFunc(g.Functions, func(f string) bool { return strings.HasSuffix(f, watchServeHTTP) }) {
			s.Writers++
		}
	}
	reqs, err := probe.APFRequests(ctx, rc)
	if err != nil {
		return s, level, err
	}
	for _, r := range reqs {
		if !r.Executing() || r.Verb != "watch" || r.Resource != "pods" || r.Namespace != namespace {
			continue
		}
		seats, err := strconv.ParseFloat(r.InitialSeats, 64)
		if err != nil {
			return s, level, fmt.Errorf("dump_requests: %s's InitialSeats %q: %w", r.UserName, r.InitialSeats, err)
		}
		s.UserSeats[r.UserName] += seats
		if _, seen := arrived[r.UserName]; !seen {
			at, err := time.Parse(time.RFC3339Nano, r.ArriveTime)
			if err != nil {
				return s, level, fmt.Errorf("dump_requests: %s's ArriveTime %q: %w", r.UserName, r.ArriveTime, err)
			}
			arrived[r.UserName] = at.Sub(started)
		}
		switch r.UserName {
		case cluster.UserSlowInformer:
			s.SlowExecuting = true
		case cluster.UserPacedReader:
			s.PacedExecuting = true
		}
		if level == "" {
			level = r.PriorityLevel
		}
	}
	if level == "" {
		return s, level, fmt.Errorf("dump_requests lists no executing pod watch in %q", namespace)
	}
	metrics, err := rc.Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return s, level, fmt.Errorf("GET /metrics: %w", err)
	}
	s.Seats, err = executingSeats(string(metrics), level)
	return s, level, err
}

// watchServeHTTP is the frame of a watch handler serving its stream.
const watchServeHTTP = probe.WatchServeHTTP

var seatsRE = regexp.MustCompile(`^apiserver_flowcontrol_current_executing_seats\{(.*)\} (\S+)$`)

// executingSeats sums apiserver_flowcontrol_current_executing_seats of
// priority level over its flow schemas.
func executingSeats(metrics, level string) (float64, error) {
	var sum float64
	found := false
	sc := bufio.NewScanner(strings.NewReader(metrics))
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		m := seatsRE.FindStringSubmatch(sc.Text())
		if m == nil || !strings.Contains(m[1], `priority_level="`+level+`"`) {
			continue
		}
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			return 0, fmt.Errorf("metrics: %q: %w", sc.Text(), err)
		}
		sum += v
		found = true
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	if !found {
		return 0, fmt.Errorf("metrics: no apiserver_flowcontrol_current_executing_seats for priority level %q", level)
	}
	return sum, nil
}

// stallLogRE matches the patched cacher's stall line (klog header: Lmmdd
// hh:mm:ss.uuuuuu).
var stallLogRE = regexp.MustCompile(`^W(\d{4} \d{2}:\d{2}:\d{2}\.\d{6}) .*watch-doctor stall fix \(\w+\): watcher .* closing it`)

// stallLines returns the times of the server's stall lines, relative to
// started (the log's clock is this machine's, in local time).
func stallLines(logPath string, started time.Time) ([]time.Duration, error) {
	f, err := os.Open(logPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []time.Duration
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		m := stallLogRE.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		at, err := time.ParseInLocation("2006 0102 15:04:05.000000", strconv.Itoa(started.Year())+" "+m[1], time.Local)
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %w", logPath, sc.Text(), err)
		}
		out = append(out, at.Sub(started))
	}
	return out, sc.Err()
}

// envDuration reads a positive Go duration from env, or returns def.
func envDuration(t *testing.T, env string, def time.Duration) time.Duration {
	t.Helper()
	v := os.Getenv(env)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		t.Fatalf("$%s=%q: want a positive Go duration such as 30s", env, v)
	}
	return d
}
