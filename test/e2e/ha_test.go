package e2e

// The highly-available control plane the HA tests share: three real
// kube-apiservers sharing one etcd, each on its own address and with its
// own hostname (a UTS namespace each, hence an identity Lease each),
// behind a TCP load balancer (cluster.StartHA), all inside the suite's
// network namespace. Each instance holds one stuck watch, of a user of its
// own (stuckUsers), and one healthy watch, each client connected to its
// instance directly.
//
// The tests run in file order: ha_addresses, ha_balancer, ha_coverage,
// ha_restart, then ha_without_profiling, which restarts every instance
// with --profiling=false and so comes last.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/watch-doctor/watch-doctor/test/e2e/cluster"
	"github.com/watch-doctor/watch-doctor/test/e2e/workload"
)

// envHAPods overrides the number of pods in the HA cluster's rand2.
const envHAPods = "E2E_HA_PODS"

// defaultHAPods is enough 20 KB pods to fill a stuck watch's HTTP/2
// window and buffers (its watcher blocks in sendWatchCacheEvent), and no
// more: the HA cluster keeps three watch caches of them.
const defaultHAPods = 1000

// stuckUsers are the users of the stuck watches on apiserver-1, -2 and -3,
// in the order of cluster.InstanceAddresses: a finding's user says which
// instance it must be on.
var stuckUsers = []string{cluster.UserSlowInformer1, cluster.UserSlowInformer, cluster.UserSlowInformer3}

// haEnv is the HA cluster and its workload, shared by the HA tests.
type haEnv struct {
	cluster *cluster.Cluster
	pods    workload.PodsOptions
	// stuckOn is apiserver-2, where slow-informer's watch is: for a test
	// that looks at one stuck instance.
	stuckOn *cluster.Instance

	mu sync.Mutex
	// clients are each instance's watches; started when they last were.
	clients map[*cluster.Instance]*haClients

	minuteOnce sync.Once
	minuteErr  error
}

// haClients are the watches pinned to one instance.
type haClients struct {
	stuck, healthy *workload.Watcher
	started        time.Time
}

func (h *haEnv) stop() error {
	h.mu.Lock()
	var ws []*workload.Watcher
	for _, c := range h.clients {
		ws = append(ws, c.stuck, c.healthy)
	}
	h.mu.Unlock()
	workload.StopAll(ws...)
	return h.cluster.Stop()
}

// sharedHA returns the suite's HA cluster with its workload, starting both
// on first use; TestMain stops them after the last test.
func sharedHA(t *testing.T) *haEnv {
	t.Helper()
	first := false
	suite.haOnce.Do(func() {
		first = true
		suite.ha, suite.haErr = startHA(t)
	})
	if err := suite.haErr; err != nil {
		if !first {
			msg, _, _ := strings.Cut(err.Error(), "\n")
			t.Fatalf("start HA cluster failed in an earlier test: %s", msg)
		}
		t.Fatalf("start HA cluster: %v", err)
	}
	return suite.ha
}

func startHA(t *testing.T) (*haEnv, error) {
	began := time.Now()
	c, err := cluster.StartHA(context.Background(), cluster.HAOptions{
		Dir:  filepath.Join(suite.dir, "ha"),
		Logf: func(format string, args ...any) { t.Logf("ha cluster: "+format, args...) },
	})
	if err != nil {
		return nil, err
	}
	h := &haEnv{cluster: c, pods: workload.DefaultPodsOptions(), clients: map[*cluster.Instance]*haClients{}}
	if err := h.start(t); err != nil {
		return nil, errors.Join(err, h.stop())
	}
	t.Logf("HA cluster and workload ready in %v", time.Since(began).Round(time.Millisecond))
	return h, nil
}

func (h *haEnv) start(t *testing.T) error {
	h.pods.Count = defaultHAPods
	if v := os.Getenv(envHAPods); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("$%s=%q: want a positive number of pods", envHAPods, v)
		}
		h.pods.Count = n
	}
	admin, err := h.cluster.LoaderClientset(500)
	if err != nil {
		return err
	}
	if err := workload.CreatePods(context.Background(), admin, h.pods); err != nil {
		return err
	}
	ins := h.cluster.Instances()
	h.stuckOn = ins[1]
	for _, in := range ins {
		if err := h.startClients(in); err != nil {
			return err
		}
		t.Logf("HA workload: on %s (%s, hostname %s): %s stuck, %s healthy", in.Name, in.Address, in.Hostname, h.stuckUser(in), cluster.UserHealthyClient)
	}
	t.Logf("HA workload: %d pods in %s", h.pods.Count, h.pods.Namespace)
	return nil
}

// stuckUser is the user of the stuck watch on in.
func (h *haEnv) stuckUser(in *cluster.Instance) string {
	return stuckUsers[slices.Index(h.cluster.Instances(), in)]
}

// instanceOf is the instance a stuck user's client connects to, nil for
// any other user.
func (h *haEnv) instanceOf(user string) *cluster.Instance {
	if i := slices.Index(stuckUsers, user); i >= 0 {
		return h.cluster.Instances()[i]
	}
	return nil
}

// startClients starts (or, once in was restarted, starts again) the stuck
// and the healthy watch pinned to in: each client connects to in's own
// address.
func (h *haEnv) startClients(in *cluster.Instance) error {
	h.mu.Lock()
	old := h.clients[in]
	h.mu.Unlock()
	if old != nil {
		workload.StopAll(old.stuck, old.healthy)
	}
	c := &haClients{started: time.Now()}
	cfg, err := h.cluster.InstanceRESTConfig(in, h.stuckUser(in))
	if err != nil {
		return err
	}
	w, err := workload.StartWatcher(context.Background(), cfg, workload.WatcherOptions{
		Name: h.stuckUser(in), Namespace: h.pods.Namespace,
		ListOptions: workload.InitialEventsListOptions(), Behaviour: workload.StopAfterFirst,
	})
	if err != nil {
		return fmt.Errorf("%s: %w", in.Name, err)
	}
	c.stuck = w
	if cfg, err = h.cluster.InstanceRESTConfig(in, cluster.UserHealthyClient); err == nil {
		c.healthy, err = workload.StartHealthyClient(context.Background(), cfg, h.pods.Namespace)
	}
	if err != nil {
		w.Stop()
		return fmt.Errorf("%s: %w", in.Name, err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.clients[in] = c
	return nil
}

// clientsOf returns in's watches.
func (h *haEnv) clientsOf(in *cluster.Instance) haClients {
	h.mu.Lock()
	defer h.mu.Unlock()
	return *h.clients[in]
}

// waitStuck waits, once, until the stuck watcher of every instance has
// shown a real one-minute wait (polled on the instance itself), so the
// plugin's verdicts are critical.
func (h *haEnv) waitStuck(t *testing.T) {
	t.Helper()
	h.minuteOnce.Do(func() {
		for _, in := range h.cluster.Instances() {
			cs, err := h.instanceClientset(in, cluster.UserAdmin)
			if err == nil {
				err = waitStuckAMinute(cs.Discovery().RESTClient(), waitDeadline(h.clientsOf(in).started, 6*time.Minute))
			}
			if err != nil {
				h.minuteErr = fmt.Errorf("%s's watcher on %s: %w", h.stuckUser(in), in.Name, err)
				return
			}
		}
	})
	if h.minuteErr != nil {
		t.Fatalf("a stuck watcher never showed a one-minute wait: %v", h.minuteErr)
	}
}

func (h *haEnv) instanceClientset(in *cluster.Instance, user string) (*kubernetes.Clientset, error) {
	cfg, err := h.cluster.InstanceRESTConfig(in, user)
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

func (h *haEnv) addresses() []string {
	var a []string
	for _, in := range h.cluster.Instances() {
		a = append(a, in.Address)
	}
	slices.Sort(a)
	return a
}

func (h *haEnv) hostnames() []string {
	var a []string
	for _, in := range h.cluster.Instances() {
		a = append(a, in.Hostname)
	}
	slices.Sort(a)
	return a
}

// startTimes are the instances' current process start times (from
// /proc), by instance.
func (h *haEnv) startTimes(t *testing.T) map[*cluster.Instance]float64 {
	t.Helper()
	out := map[*cluster.Instance]float64{}
	distinct := map[float64]bool{}
	for _, in := range h.cluster.Instances() {
		st, err := in.StartTime()
		if err != nil {
			t.Fatalf("%s: %v", in.Name, err)
		}
		out[in] = st
		distinct[st] = true
	}
	if len(distinct) != len(out) {
		t.Fatalf("the instances' start times %v are not distinct: they cannot tell the processes apart", out)
	}
	return out
}

// restartInstance brings a killed instance back, with new watches on it,
// so later tests see three instances again.
func restartInstance(t *testing.T, h *haEnv, in *cluster.Instance) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := h.cluster.RestartInstance(ctx, in); err != nil {
		t.Errorf("restart %s: %v", in.Name, err)
		return
	}
	if err := h.startClients(in); err != nil {
		t.Errorf("restart the watches on %s: %v", in.Name, err)
	}
}

// sameStart compares a process_start_time_seconds with a start time read
// from /proc. Both add the boot time of /proc/stat (whole seconds), which
// the kernel recomputes on each read and can move by a second; so a
// difference of one second (within tol) also counts.
func sameStart(metric, proc, tol float64) bool {
	d := math.Abs(metric - proc)
	return d <= tol || math.Abs(d-1) <= tol
}
