package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/watch-doctor/watch-doctor/test/e2e/cluster"
	"github.com/watch-doctor/watch-doctor/test/e2e/probe"
	"github.com/watch-doctor/watch-doctor/test/e2e/workload"
)

// Environment variables the suite reads (test/e2e/run.sh passes them through).
const (
	// envPods overrides the number of pods in namespace rand2 (default 2000).
	envPods = "E2E_PODS"
	// envPacedInterval overrides the paced reader's pause between two
	// reads, as a Go duration (default: pacedInterval, 400ms or as long as
	// makes its replay outlast the suite's -timeout).
	envPacedInterval = "E2E_PACED_INTERVAL"
	// envKeep keeps the cluster's directory (logs, kubeconfigs) after a
	// successful run; it is always kept after a failure.
	envKeep = "E2E_KEEP"
)

// suite holds what the tests of this package share: one cluster, started by
// the first test that needs it, and one reproduction workload on it. Both are
// torn down by TestMain after the last test.
var suite struct {
	dir string

	clusterOnce sync.Once
	cluster     *cluster.Cluster
	clusterErr  error
	// clusterErrShown: the first test to see clusterErr prints it whole.
	clusterErrShown sync.Once

	reproOnce sync.Once
	repro     *reproEnv
	reproErr  error

	// warmLog holds what the shared cluster's start in the background
	// logged (runSuite).
	warmLog lineLog

	// The HA cluster and its workload (ha_test.go), also started once.
	haOnce sync.Once
	ha     *haEnv
	haErr  error
}

func TestMain(m *testing.M) { os.Exit(runSuite(m)) }

func runSuite(m *testing.M) int {
	// Missing binaries fail the run (never a skip): a green e2e run must
	// mean the reproduction was seen on a real API server.
	if _, _, err := cluster.BinariesFromEnv(); err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: %v\n", err)
		return 1
	}
	// Nor does it run on the host's network: only inside the network
	// namespace of run.sh, where lo is the only interface.
	if err := cluster.CheckIsolatedNetwork(); err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: %v\n", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "watch-doctor-e2e-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: %v\n", err)
		return 1
	}
	suite.dir = dir

	// The whole suite: start the shared cluster and its reproduction in
	// the background now, so their one-minute wait overlaps the HA tests'
	// (which run first). A -run selection starts what it needs on demand.
	warmed := make(chan struct{})
	began := time.Now()
	flag.Parse()
	if f := flag.Lookup("test.run"); f != nil && f.Value.String() == "" {
		go func() {
			defer close(warmed)
			suite.clusterOnce.Do(func() { suite.cluster, suite.clusterErr = startSharedCluster(suite.warmLog.logf) })
			if suite.clusterErr != nil {
				return
			}
			suite.reproOnce.Do(func() {
				suite.repro, suite.reproErr = startRepro(suite.warmLog.logf, suite.cluster, suiteDeadline(began))
			})
		}()
	} else {
		close(warmed)
	}

	code := m.Run()
	<-warmed

	if r := suite.repro; r != nil {
		r.stop()
	}
	if h := suite.ha; h != nil {
		fmt.Fprintf(os.Stderr, "e2e: HA cluster memory at teardown: %s\n", h.cluster.MemoryUsage())
		if err := h.stop(); err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: stop HA cluster: %v\n", err)
			code = 1
		}
	}
	if c := suite.cluster; c != nil {
		fmt.Fprintf(os.Stderr, "e2e: memory at teardown: %s\n", c.MemoryUsage())
		if err := c.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: stop cluster: %v\n", err)
			code = 1
		}
	}
	if code != 0 || os.Getenv(envKeep) != "" {
		fmt.Fprintf(os.Stderr, "e2e: cluster files and logs kept in %s\n", dir)
	} else if err := os.RemoveAll(dir); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: remove %s: %v\n", dir, err)
	}
	return code
}

// sharedCluster returns the package's cluster, starting it on first use. A
// failed start fails every test that asks for it.
func sharedCluster(t *testing.T) *cluster.Cluster {
	t.Helper()
	suite.clusterOnce.Do(func() {
		suite.cluster, suite.clusterErr = startSharedCluster(func(format string, args ...any) { t.Logf(format, args...) })
	})
	suite.warmLog.flush(t)
	if err := suite.clusterErr; err != nil {
		first := false
		suite.clusterErrShown.Do(func() { first = true })
		if !first {
			msg, _, _ := strings.Cut(err.Error(), "\n")
			t.Fatalf("start cluster failed in an earlier test: %s", msg)
		}
		t.Fatalf("start cluster: %v", err)
	}
	return suite.cluster
}

func startSharedCluster(logf func(format string, args ...any)) (*cluster.Cluster, error) {
	began := time.Now()
	c, err := cluster.Start(context.Background(), cluster.Options{
		Dir:  suite.dir,
		Logf: func(format string, args ...any) { logf("cluster: "+format, args...) },
	})
	if err == nil {
		logf("cluster started in %v", time.Since(began).Round(time.Millisecond))
	}
	return c, err
}

// lineLog keeps the lines logged by a start in the background until a test
// can print them.
type lineLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *lineLog) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, time.Now().Format("15:04:05.000 ")+fmt.Sprintf(format, args...))
}

// flush logs the kept lines on t, once.
func (l *lineLog) flush(t *testing.T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		t.Log("(started in the background) " + line)
	}
	l.lines = nil
}

// reproEnv is the issue 131721 reproduction running on the shared cluster.
type reproEnv struct {
	cluster *cluster.Cluster
	pods    workload.PodsOptions
	// clientsStarted is when the three watchers opened their watches.
	clientsStarted time.Time

	slowInformer  *workload.Watcher
	pacedReader   *workload.Watcher
	healthyClient *workload.Watcher
	cancel        context.CancelFunc
}

func (r *reproEnv) stop() {
	r.cancel()
	workload.StopAll(r.slowInformer, r.pacedReader, r.healthyClient)
}

// sharedRepro returns the reproduction workload, creating the pods and
// starting the three watch clients on first use. The clients keep running
// until TestMain tears the suite down, so later tests (the plugin's) see the
// stuck watch too, older.
func sharedRepro(t *testing.T) *reproEnv {
	t.Helper()
	c := sharedCluster(t)
	suite.reproOnce.Do(func() {
		deadline, _ := t.Deadline()
		suite.repro, suite.reproErr = startRepro(func(format string, args ...any) { t.Logf(format, args...) }, c, deadline)
	})
	suite.warmLog.flush(t)
	if suite.reproErr != nil {
		t.Fatalf("start reproduction workload: %v", suite.reproErr)
	}
	return suite.repro
}

// waitSenderBlocked waits until the API server shows an initial-events
// sender (slow-informer's) before the next watcher starts. The plugin pairs
// the two initial-phase watchers with their APF requests by handler
// goroutine id against arrival time (internal/diagnosis/components.go, orderHint), and goroutine ids
// follow creation only roughly (each P takes them in batches); requests
// seconds apart, with the API server's own goroutines created in between,
// keep that order on a loaded machine.
func waitSenderBlocked(admin rest.Interface) error {
	if err := probe.WaitInitialEventsSenders(context.Background(), admin, 1, time.Minute); err != nil {
		return fmt.Errorf("slow-informer's watcher never blocked sending initial events: %w", err)
	}
	return nil
}

// pacedInterval is the paced reader's pause between two reads when
// $E2E_PACED_INTERVAL does not set it: 400ms, or longer when the suite may
// run past count reads at 400ms. The paced reader must still be replaying
// its initial events when the last test that shares it runs: at 400ms it
// read 2000 pods' events in 13m20s, and on a loaded machine the sequential
// tests before TestReproInitialEventsWatchBlocks took 14 minutes, so it
// found the paced reader's watcher past its initial events (one sender,
// not two), and a collect and a diagnose run 30 s apart saw different
// servers. A zero deadline (go test -timeout 0) keeps 400ms.
func pacedInterval(now, deadline time.Time, count int) time.Duration {
	least := 400 * time.Millisecond
	if deadline.IsZero() || count < 1 {
		return least
	}
	per := deadline.Sub(now) / time.Duration(count)
	return max(least, per.Round(100*time.Millisecond)+100*time.Millisecond)
}

// suiteDeadline is when go test's -timeout ends the suite, as testing.T's
// Deadline says inside a test; zero without a timeout.
func suiteDeadline(began time.Time) time.Time {
	f := flag.Lookup("test.timeout")
	if f == nil {
		return time.Time{}
	}
	d, err := time.ParseDuration(f.Value.String())
	if err != nil || d <= 0 {
		return time.Time{}
	}
	return began.Add(d)
}

func startRepro(logf func(format string, args ...any), c *cluster.Cluster, deadline time.Time) (*reproEnv, error) {
	pods := workload.DefaultPodsOptions()
	if v := os.Getenv(envPods); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("$%s=%q: want a positive number of pods", envPods, v)
		}
		pods.Count = n
	}
	interval := pacedInterval(time.Now(), deadline, pods.Count)
	if v := os.Getenv(envPacedInterval); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("$%s=%q: want a positive Go duration such as 400ms", envPacedInterval, v)
		}
		interval = d
	}

	admin, err := c.LoaderClientset(500)
	if err != nil {
		return nil, err
	}
	began := time.Now()
	if err := workload.CreatePods(context.Background(), admin, pods); err != nil {
		return nil, err
	}
	logf("created %d pods of %d B in namespace %q in %v", pods.Count, pods.AnnotationBytes, pods.Namespace,
		time.Since(began).Round(time.Millisecond))

	ctx, cancel := context.WithCancel(context.Background())
	r := &reproEnv{cluster: c, pods: pods, cancel: cancel, clientsStarted: time.Now()}
	for _, w := range []struct {
		user  string
		dst   **workload.Watcher
		start func(context.Context, *rest.Config) (*workload.Watcher, error)
	}{
		{cluster.UserSlowInformer, &r.slowInformer, func(ctx context.Context, cfg *rest.Config) (*workload.Watcher, error) {
			return workload.StartSlowInformer(ctx, cfg, pods.Namespace)
		}},
		{cluster.UserPacedReader, &r.pacedReader, func(ctx context.Context, cfg *rest.Config) (*workload.Watcher, error) {
			return workload.StartPacedReader(ctx, cfg, pods.Namespace, interval)
		}},
		{cluster.UserHealthyClient, &r.healthyClient, func(ctx context.Context, cfg *rest.Config) (*workload.Watcher, error) {
			return workload.StartHealthyClient(ctx, cfg, pods.Namespace)
		}},
	} {
		cfg, err := c.RESTConfig(w.user)
		if err == nil {
			*w.dst, err = w.start(ctx, cfg)
		}
		if err == nil && w.user == cluster.UserSlowInformer {
			err = waitSenderBlocked(admin.Discovery().RESTClient())
		}
		if err != nil {
			r.stop()
			return nil, err
		}
	}
	logf("started watchers %s, %s (every %v) and %s", r.slowInformer.Name(), r.pacedReader.Name(), interval, r.healthyClient.Name())
	return r, nil
}

// waitDeadline is the deadline of a wait for something due by d after
// started: later tests of the package may begin long after the clients
// started (the shared cluster starts while the other tests run), so the
// wait always has at least a minute of its own.
func waitDeadline(started time.Time, d time.Duration) time.Time {
	if due, least := started.Add(d), time.Now().Add(time.Minute); due.After(least) {
		return due
	}
	return time.Now().Add(time.Minute)
}
