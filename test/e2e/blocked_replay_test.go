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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/watch-doctor/watch-doctor/test/e2e/cluster"
	"github.com/watch-doctor/watch-doctor/test/e2e/h2sniff"
	"github.com/watch-doctor/watch-doctor/test/e2e/probe"
	"github.com/watch-doctor/watch-doctor/test/e2e/workload"
)

// The workload of TestBlockedReplayQuietAndBusy: two namespaces of the same
// pods, one stuck initial-events watch on each, and updates to the pods of
// one of them only.
const (
	replayQuietNamespace = "quiet"
	replayBusyNamespace  = "busy"
	// replayPods of 20 KB per namespace (12 MB: more than client-go's
	// 4 MiB stream window plus the server's buffers, as TestPatchedServers).
	replayPods = 600
	// replayUpdateEvery paces the updates to the busy namespace's pods
	// (40 per second).
	replayUpdateEvery = 25 * time.Millisecond
	// replayMaxUpdates bounds them: more than the largest input channel a
	// pods watcher without a trigger can get (maxWatchChanSizeWithIndexWithoutTrigger,
	// 1000: k8s.io/apiserver v0.38.0-beta.0 watch_cache_history.go:189), so
	// a watcher still registered after them has had its input full.
	replayMaxUpdates = 1100
)

// replayWatch is one stuck watch, as the server's goroutines show it.
type replayWatch struct {
	namespace string
	watcher   *workload.Watcher
	sniff     *h2sniff.Recorder
	// watcherID is the cacheWatcher goroutine blocked in the initial
	// replay when the watch started, handlerID its parent (the handler
	// serving the watch); event the sendWatchCacheEvent argument it was
	// blocked on.
	watcherID, handlerID int
	event                string
	// started is when its client was started.
	started time.Time
}

// replayState is what one look at the server shows of one stuck watch.
type replayState struct {
	// WatcherBlocked: its cacheWatcher goroutine is still in the initial
	// replay, in sendWatchCacheEvent on the same event.
	WatcherBlocked bool
	// WatcherGone: its cacheWatcher goroutine is gone from the dump.
	WatcherGone bool
	// HandlerWriting: its handler is blocked writing an event.
	HandlerWriting bool
	// APFWaiting: APF's goroutine of the request still waits for the
	// watch to be initialized (holding the seat).
	APFWaiting bool
	// Executing: dump_requests lists the watch as executing.
	Executing bool
	// StreamEnded: the client's transport was told the stream ended.
	StreamEnded bool
}

func (s replayState) String() string {
	return fmt.Sprintf("watcher blocked in the replay %v (gone %v), handler writing %v, APF waiting %v, executing %v, client told %v",
		s.WatcherBlocked, s.WatcherGone, s.HandlerWriting, s.APFWaiting, s.Executing, s.StreamEnded)
}

// blockedReplayResult is what TestBlockedReplayQuietAndBusy measured on one
// server.
type blockedReplayResult struct {
	quiet, busy replayState
	// updates made to the busy namespace's pods until the dispatcher
	// terminated the busy watcher (or replayMaxUpdates), and in how long.
	updates int
	took    time.Duration
	// terminated is the growth of apiserver_terminated_watchers_total of
	// pods over the updates.
	terminated float64
	// forced are the server's "Forcing pods watcher close due to
	// unresponsiveness" lines (klog V(1), cacher's add: v0.37.2
	// cache_watcher.go:214, v0.38.0-beta.0 :230), each ending in
	// "graceful = true|false".
	forced []string
	// stalls is, on a patched server, when its stall fix gave up on each
	// namespace's watcher, since that watch's client started (patched_replay_test.go).
	stalls map[string]time.Duration
}

// TestBlockedReplayQuietAndBusy measures, on the real servers of the
// releases the suite runs (v1.37.2, and v1.38.0-beta.0, whose watcher
// receives its initial interval through the same input channel the
// dispatcher fills), what happens to an initial replay blocked on a client
// that stopped reading: on a quiet resource (no object of its namespace
// changes) and on a busy one (its namespace's pods are updated 40 times a
// second while the watch is stuck, until the dispatcher terminates the
// watcher, at most replayMaxUpdates times). Both watches are the seed's
// slow informer. The figures are in docs/versions.md.
//
// The dispatcher terminates the busy watcher once its input is full (add,
// after the dispatch time budget), and it does so gracefully: the watch
// had received a bookmark at or after its initial events' resource
// version (bookmarks go to a watcher waiting for one every second), so
// forget(true) only unregisters it and closes its input, leaving c.done
// open (stopLocked, drainInputBuffer). The replay stays blocked in
// sendWatchCacheEvent, the handler writing, the APF seat held, and the
// client is never told: the same as on the quiet resource.
func TestBlockedReplayQuietAndBusy(t *testing.T) {
	for _, rel := range suiteReleases(t) {
		t.Run(rel.version, func(t *testing.T) {
			// A cluster of its own per release, both at once.
			t.Parallel()
			r := measureBlockedReplay(t, rel.bin)
			held := replayState{WatcherBlocked: true, HandlerWriting: true, APFWaiting: true, Executing: true}
			if r.quiet != held {
				t.Errorf("%s, quiet resource: %v\nwant %v", rel.version, r.quiet, held)
			}
			if r.busy != held {
				t.Errorf("%s, busy resource: %v\nwant %v", rel.version, r.busy, held)
			}
			if r.terminated != 1 {
				t.Errorf("%s: apiserver_terminated_watchers_total of pods grew by %v, want 1 (the busy watcher)", rel.version, r.terminated)
			}
			if len(r.forced) != 1 || !strings.Contains(r.forced[0], `/`+replayBusyNamespace+`/"`) || !strings.HasSuffix(r.forced[0], "graceful = true") {
				t.Errorf("%s: the server forced %q, want one graceful close of the busy namespace's watcher", rel.version, r.forced)
			}
		})
	}
}

// release is one kube-apiserver release the suite runs.
type release struct{ version, bin string }

// suiteReleases are v1.37.2 ($KUBE_APISERVER_BIN) and the newer release
// test/e2e/run.sh builds ($KUBE_APISERVER_NEWER_BIN, $E2E_NEWER_KUBE_VERSION).
func suiteReleases(t *testing.T) []release {
	t.Helper()
	newer := newerRelease(t)
	return []release{{"v1.37.2", os.Getenv("KUBE_APISERVER_BIN")}, newer}
}

// measureBlockedReplay runs the workload on a cluster of bin (logging at
// --v=1, for the cacher's forced closes) and returns what it measured.
func measureBlockedReplay(t *testing.T, bin string) blockedReplayResult {
	t.Helper()
	return measureBlockedReplayWith(t, cluster.Options{KubeAPIServerBin: bin}, nil)
}

// measureBlockedReplayWith is measureBlockedReplay on a cluster of opts
// (with --v=1 added). afterUpdates, if not nil, runs once the busy watcher was
// terminated and before the watches' states are read; it waits for what
// the server does later (a patched server's stall timeout) and records it
// in r.
func measureBlockedReplayWith(t *testing.T, opts cluster.Options, afterUpdates func(ctx context.Context, c *cluster.Cluster, ws []*replayWatch, r *blockedReplayResult) error) blockedReplayResult {
	t.Helper()
	opts.ExtraAPIServerArgs = append(opts.ExtraAPIServerArgs, "--v=1")
	c := cluster.StartForTest(t, opts)
	cfg, err := c.RESTConfig(cluster.UserAdmin)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 500, 500
	admin := mustClientset(t, cfg)
	rc := admin.Discovery().RESTClient()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	for _, ns := range []string{replayQuietNamespace, replayBusyNamespace} {
		if err := workload.CreatePods(ctx, admin, workload.PodsOptions{Namespace: ns, Count: replayPods, AnnotationBytes: 20 << 10, Workers: 16}); err != nil {
			t.Fatal(err)
		}
	}
	var watches []*replayWatch
	t.Cleanup(func() {
		for _, w := range watches {
			w.watcher.Stop()
		}
	})
	for _, ns := range []string{replayQuietNamespace, replayBusyNamespace} {
		w, err := startStuckWatch(ctx, c, rc, ns, watches)
		if err != nil {
			t.Fatal(err)
		}
		watches = append(watches, w)
		t.Logf("%s: watcher goroutine %d, handler %d, blocked on event %s", ns, w.watcherID, w.handlerID, w.event)
	}
	before, err := terminatedWatchers(ctx, rc)
	if err != nil {
		t.Fatal(err)
	}
	var r blockedReplayResult
	began := time.Now()
	r.updates, err = updateUntil(ctx, admin, func(ctx context.Context) (bool, error) {
		n, err := terminatedWatchers(ctx, rc)
		return n > before, err
	})
	if err != nil {
		t.Fatal(err)
	}
	r.took = time.Since(began)
	after, err := terminatedWatchers(ctx, rc)
	if err != nil {
		t.Fatal(err)
	}
	r.terminated = after - before
	t.Logf("%d updates to pods in %q in %v; apiserver_terminated_watchers_total{resource=\"pods\"} %v -> %v",
		r.updates, replayBusyNamespace, r.took.Round(time.Millisecond), before, after)
	if afterUpdates != nil {
		if err := afterUpdates(ctx, c, watches, &r); err != nil {
			t.Fatal(err)
		}
	}
	// Whatever the termination frees goes at once (a replay returns on
	// c.done, process then signals APF): poll until two looks a second
	// apart agree, within a bound.
	var last []replayState
	err = wait.PollUntilContextTimeout(ctx, time.Second, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		states, err := lookAtReplays(ctx, rc, watches)
		if err != nil {
			return false, err
		}
		stable := slices.Equal(states, last)
		last = states
		return stable, nil
	})
	if err != nil {
		t.Fatalf("the watches' states did not settle: %v (last %v)", err, last)
	}
	r.quiet, r.busy = last[0], last[1]
	for i, w := range watches {
		t.Logf("%s: %v; client read %d events", w.namespace, last[i], w.watcher.Events())
	}
	_, log := c.LogFiles()
	if r.forced, err = forcedCloses(log); err != nil {
		t.Fatal(err)
	}
	t.Logf("server log: %q", r.forced)
	return r
}

// forcedCloses returns the cacher's forced-close lines of the log at path,
// from "Forcing" on.
func forcedCloses(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		if _, rest, ok := strings.Cut(sc.Text(), "] Forcing "); ok && strings.Contains(rest, "watcher close due to unresponsiveness") {
			out = append(out, "Forcing "+rest)
		}
	}
	return out, sc.Err()
}

// startStuckWatch starts the slow informer on namespace ns and waits until
// its watcher blocks in the initial replay (one more sender than those of
// the watches already started).
func startStuckWatch(ctx context.Context, c *cluster.Cluster, rc rest.Interface, ns string, started []*replayWatch) (*replayWatch, error) {
	cfg, err := c.RESTConfig(cluster.UserSlowInformer)
	if err != nil {
		return nil, err
	}
	cfg, rec, err := h2sniff.Config(cfg)
	if err != nil {
		return nil, err
	}
	startedAt := time.Now()
	w, err := workload.StartSlowInformer(ctx, cfg, ns)
	if err != nil {
		return nil, err
	}
	if err := probe.WaitInitialEventsSenders(ctx, rc, len(started)+1, time.Minute); err != nil {
		w.Stop()
		return nil, fmt.Errorf("%s: the watcher never blocked in the initial replay: %w", ns, err)
	}
	// The new sender blocks for good once the client's stream window and
	// the server's buffers are full: wait until it shows the same event
	// in two looks a second apart.
	var last *replayWatch
	err = wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		gs, err := goroutines(ctx, rc)
		if err != nil {
			return false, err
		}
		for _, g := range probe.InitialEventsSenders(gs) {
			if slices.ContainsFunc(started, func(s *replayWatch) bool { return s.watcherID == g.ID }) {
				continue
			}
			cur := &replayWatch{namespace: ns, watcher: w, sniff: rec, watcherID: g.ID, handlerID: g.ParentID, event: g.Event, started: startedAt}
			stable := last != nil && last.watcherID == cur.watcherID && last.event == cur.event
			last = cur
			return stable, nil
		}
		last = nil
		return false, nil
	})
	if err != nil {
		w.Stop()
		return nil, fmt.Errorf("%s: the new watcher never stood still in the initial replay: %w", ns, err)
	}
	return last, nil
}

// updateUntil updates the busy namespace's pods every replayUpdateEvery,
// looking at the server every 20 updates, until done says so or after
// replayMaxUpdates; it returns the number of updates made.
func updateUntil(ctx context.Context, cs kubernetes.Interface, done func(context.Context) (bool, error)) (int, error) {
	tick := time.NewTicker(replayUpdateEvery)
	defer tick.Stop()
	for i := range replayMaxUpdates {
		select {
		case <-ctx.Done():
			return i, ctx.Err()
		case <-tick.C:
		}
		patch := fmt.Sprintf(`{"metadata":{"labels":{"watch-doctor.io/tick":"%d"}}}`, i)
		if _, err := cs.CoreV1().Pods(replayBusyNamespace).Patch(ctx, workload.PodName(i%replayPods), types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			return i, fmt.Errorf("update %d: %w", i, err)
		}
		if (i+1)%20 != 0 {
			continue
		}
		if ok, err := done(ctx); err != nil || ok {
			return i + 1, err
		}
	}
	return replayMaxUpdates, nil
}

// lookAtReplays reads the goroutine dump and the APF dump once and returns
// each watch's state, in the order of ws.
func lookAtReplays(ctx context.Context, rc rest.Interface, ws []*replayWatch) ([]replayState, error) {
	gs, err := goroutines(ctx, rc)
	if err != nil {
		return nil, err
	}
	reqs, err := probe.APFRequests(ctx, rc)
	if err != nil {
		return nil, err
	}
	byID := map[int]probe.Goroutine{}
	for _, g := range gs {
		byID[g.ID] = g
	}
	senders := probe.InitialEventsSenders(gs)
	out := make([]replayState, len(ws))
	for i, w := range ws {
		s := &out[i]
		_, present := byID[w.watcherID]
		s.WatcherGone = !present
		s.WatcherBlocked = slices.ContainsFunc(senders, func(g probe.Goroutine) bool { return g.ID == w.watcherID && g.Event == w.event })
		if h, ok := byID[w.handlerID]; ok {
			s.HandlerWriting = len(h.Functions) > 0 && probe.IsWriteDataFromHandler(h.Functions[0])
		}
		s.APFWaiting = slices.ContainsFunc(gs, func(g probe.Goroutine) bool {
			return g.ParentID == w.handlerID && len(g.Functions) > 0 && g.Functions[0] == probe.APFWait
		})
		s.Executing = slices.ContainsFunc(reqs, func(r probe.APFRequest) bool {
			return r.Executing() && r.Verb == "watch" && r.Resource == "pods" && r.Namespace == w.namespace
		})
		s.StreamEnded = len(w.sniff.Ends()) > 0 || !w.sniff.GoAway().IsZero()
	}
	return out, nil
}

var terminatedRE = regexp.MustCompile(`^apiserver_terminated_watchers_total\{(.*)\} (\S+)$`)

// terminatedWatchers reads apiserver_terminated_watchers_total of pods (0
// while the server has not terminated any: the series is created on the
// first).
func terminatedWatchers(ctx context.Context, rc rest.Interface) (float64, error) {
	return terminatedWatchersOf(ctx, rc, "pods")
}

// terminatedWatchersOf reads apiserver_terminated_watchers_total of a
// core resource (0 while the server has terminated none of its watchers).
func terminatedWatchersOf(ctx context.Context, rc rest.Interface, resource string) (float64, error) {
	b, err := rc.Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return 0, fmt.Errorf("GET /metrics: %w", err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		m := terminatedRE.FindStringSubmatch(sc.Text())
		if m == nil || !strings.Contains(m[1], fmt.Sprintf("resource=%q", resource)) {
			continue
		}
		return strconv.ParseFloat(m[2], 64)
	}
	return 0, sc.Err()
}
