package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/watch-doctor/watch-doctor/test/e2e/cluster"
	"github.com/watch-doctor/watch-doctor/test/e2e/probe"
	"github.com/watch-doctor/watch-doctor/test/e2e/workload"
)

// The attribution test's workload: pods and configmaps big enough that a
// client that stops reading fills its HTTP/2 window or TCP buffers (random
// base64, which gzip cannot shrink).
const (
	attrNamespace     = "attr"
	attrPods          = 600
	attrConfigMaps    = 30
	attrConfigMapSize = 400 << 10
	attrRuns          = 5
	// attrWatchQuery asks for initial events, served from the watch cache
	// (the reproduction of kubernetes issue 131721).
	attrWatchQuery = "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=0&allowWatchBookmarks=true&timeoutSeconds=3600"
)

// attrClient is one watch client of an attribution run.
type attrClient struct {
	user string
	// stuck: it stops reading during the initial events; progressing: it
	// keeps reading slowly; neither: a healthy watch without initial
	// events.
	stuck, progressing bool
	resource           string // "pods" or "configmaps"
	start              func(ctx context.Context) (stop func(), err error)
}

// TestAttributionAcrossClients runs watch clients nobody here wrote (curl
// over HTTP/2, kubectl get --raw, @kubernetes/client-node over HTTP/1.1)
// next to client-go stuck, paced and healthy readers, on two resources,
// started in random order a few milliseconds apart, and checks on every
// run what the plugin says of who holds each watch:
//   - no finding names a progressing or healthy client as stuck;
//   - the only initial-phase watcher of configmaps is matched exact, to
//     its client;
//   - every stuck client appears, by name or among the candidates.
func TestAttributionAcrossClients(t *testing.T) {
	clientsDir := attrClientsDir(t)
	c := cluster.StartForTest(t, cluster.Options{})
	cfg, err := c.RESTConfig(cluster.UserAdmin)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 500, 500
	ctx := context.Background()
	began := time.Now()
	if err := workload.CreatePods(ctx, mustClientset(t, cfg), workload.PodsOptions{Namespace: attrNamespace, Count: attrPods, AnnotationBytes: 20 << 10, Workers: 16}); err != nil {
		t.Fatal(err)
	}
	if err := createConfigMaps(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	t.Logf("created %d pods and %d configmaps of %d KiB in %v", attrPods, attrConfigMaps, attrConfigMapSize>>10, time.Since(began).Round(time.Millisecond))

	seed := uint64(time.Now().UnixNano())
	t.Logf("random seed %d", seed)
	rng := mrand.New(mrand.NewPCG(seed, 0))
	// The configmaps watch is the only one of its resource: each run gives
	// it to another of the clients that take a URL.
	cmUsers := []string{cluster.UserKubectlReader, cluster.UserCurlReader, cluster.UserNodeReader}
	for run := range attrRuns {
		t.Run(fmt.Sprintf("run-%d", run+1), func(t *testing.T) {
			attributionRun(t, c, clientsDir, cmUsers[run%len(cmUsers)], rng)
		})
	}
}

func attributionRun(t *testing.T, c *cluster.Cluster, clientsDir, cmUser string, rng *mrand.Rand) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	path := func(resource string) string {
		if resource == "configmaps" {
			return "/api/v1/configmaps" // cluster-wide
		}
		return "/api/v1/namespaces/" + attrNamespace + "/pods"
	}
	resourceOf := func(user string) string {
		if user == cmUser {
			return "configmaps"
		}
		return "pods"
	}
	goWatcher := func(user string, opts workload.WatcherOptions) func(context.Context) (func(), error) {
		return func(ctx context.Context) (func(), error) {
			cfg, err := c.RESTConfig(user)
			if err != nil {
				return nil, err
			}
			opts.Name, opts.Namespace = user, attrNamespace
			w, err := workload.StartWatcher(ctx, cfg, opts)
			if err != nil {
				return nil, err
			}
			return w.Stop, nil
		}
	}
	curl := func(ctx context.Context) (func(), error) {
		u := c.Server() + path(resourceOf(cluster.UserCurlReader)) + "?" + attrWatchQuery
		// A reader that takes 1 KiB, then holds the pipe without reading.
		script := `curl --http2 -sS -N --cacert "$CA" -H "Authorization: Bearer $TOKEN" "$URL" | { dd bs=1024 count=1 of=/dev/null 2>/dev/null; exec sleep 3600; }`
		return startProcess(t, "sh", []string{"-c", script}, "", "CA="+c.CAFile(), "TOKEN="+c.Token(cluster.UserCurlReader), "URL="+u)
	}
	kubectl := func(ctx context.Context) (func(), error) {
		raw := path(resourceOf(cluster.UserKubectlReader)) + "?" + attrWatchQuery
		return startProcess(t, "sh", []string{"-c", `kubectl get --raw "$RAW" | sleep 3600`}, "", "KUBECONFIG="+c.Kubeconfig(cluster.UserKubectlReader), "RAW="+raw)
	}
	node := func(ctx context.Context) (func(), error) {
		return startProcess(t, "node", []string{filepath.Join(clientsDir, "stuck-watch.js"), path(resourceOf(cluster.UserNodeReader))}, clientsDir, "KUBECONFIG="+c.Kubeconfig(cluster.UserNodeReader))
	}
	clients := []attrClient{
		{user: cluster.UserCurlReader, stuck: true, start: curl},
		{user: cluster.UserKubectlReader, stuck: true, start: kubectl},
		{user: cluster.UserNodeReader, stuck: true, start: node},
		{user: cluster.UserSlowInformer, stuck: true, start: goWatcher(cluster.UserSlowInformer, workload.WatcherOptions{ListOptions: workload.InitialEventsListOptions(), Behaviour: workload.StopAfterFirst})},
		{user: cluster.UserPacedReader, progressing: true, start: goWatcher(cluster.UserPacedReader, workload.WatcherOptions{ListOptions: workload.InitialEventsListOptions(), Behaviour: workload.Paced, Interval: 300 * time.Millisecond})},
		{user: cluster.UserHealthyClient, start: goWatcher(cluster.UserHealthyClient, workload.WatcherOptions{Behaviour: workload.ReadAll})},
	}
	for i := range clients {
		clients[i].resource = resourceOf(clients[i].user)
	}
	rng.Shuffle(len(clients), func(i, j int) { clients[i], clients[j] = clients[j], clients[i] })
	var order []string
	var stops []func()
	defer func() {
		for _, stop := range stops {
			stop()
		}
		waitNoInitialWatches(t, c)
	}()
	for k, cl := range clients {
		if k > 0 {
			// Arrival gaps of 0-50 ms: the clients must not arrive in a
			// known order.
			time.Sleep(time.Duration(rng.IntN(51)) * time.Millisecond)
		}
		stop, err := cl.start(ctx)
		if err != nil {
			t.Fatalf("start %s: %v", cl.user, err)
		}
		stops = append(stops, stop)
		order = append(order, cl.user+"("+cl.resource+")")
	}
	t.Logf("started in this order: %s", strings.Join(order, ", "))

	// Ready when the five initial-events watchers are all blocked sending
	// (the paced reader's between two reads) and APF holds their requests.
	admin := clientsetFor(t, c, cluster.UserAdmin).Discovery().RESTClient()
	// The four clients that stopped reading must also have settled: over
	// HTTP/1.1 the kernel's socket buffers take data for a while after the
	// client stopped, so its watcher still moves on for a few seconds
	// (docs/analyze.md, Attribution). Settled: four senders on the same event in
	// three dumps in a row, a second apart.
	var lastSeen string
	prev := map[int]string{}
	stable := map[int]int{}
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		gs, err := goroutines(ctx, admin)
		if err != nil {
			return false, err
		}
		reqs, err := probe.APFRequests(ctx, admin)
		if err != nil {
			return false, err
		}
		users := executingWatchUsersAll(reqs)
		senders := probe.InitialEventsSenders(gs)
		settled := 0
		next := map[int]string{}
		for _, g := range senders {
			next[g.ID] = g.Event
			if e, ok := prev[g.ID]; ok && e == g.Event && e != "" {
				stable[g.ID]++
			} else {
				stable[g.ID] = 0
			}
			if stable[g.ID] >= 2 {
				settled++
			}
		}
		prev = next
		lastSeen = fmt.Sprintf("%d watchers blocked in sendWatchCacheEvent from processInterval, %d of them on the same event for 3 dumps; executing watches by %v", len(senders), settled, users)
		return len(senders) >= 5 && len(users) >= 5 && settled >= 4, nil
	})
	if err != nil {
		t.Fatalf("the clients' watches did not block within the run's time: %v; last seen: %s", err, lastSeen)
	}

	// The watches are seconds old: the cheap look alone would answer "none
	// initializing past the 30 s stall bound" and take no goroutine dump
	// (docs/diagnose.md). --force takes the dump, whose evidence this test
	// is about.
	res := runPlugin(t, c, cluster.UserWatchDoctor, "diagnose", "--force", "--apiserver", instanceAddress(t, c), "--samples", "2", "--interval", "5s", "-o", "json")
	if res.ExitCode != 0 && res.ExitCode != 1 {
		t.Fatalf("diagnose exit %d\nstderr:\n%s", res.ExitCode, res.Stderr)
	}
	rep := decode(t, res)
	checkAttribution(t, rep, clients, cmUser)
	checkEvidence(t, res)
}

// checkAttribution asserts the three promises of the attribution contract
// on one report.
func checkAttribution(t *testing.T, rep report, clients []attrClient, cmUser string) {
	t.Helper()
	byUser := map[string]attrClient{}
	for _, cl := range clients {
		byUser[cl.user] = cl
	}
	appeared := map[string]bool{}
	cmFindings := 0
	var summary []string
	for _, f := range rep.Findings {
		if f.Client == nil {
			t.Errorf("finding %s on goroutine %v has no client at all", f.Type, f.GoroutineIDs)
			continue
		}
		var names []string
		if f.Client.User != "" {
			names = []string{f.Client.User}
		}
		for _, cd := range f.Candidates {
			names = append(names, cd.User)
		}
		for _, n := range names {
			appeared[n] = true
		}
		summary = append(summary, fmt.Sprintf("%s/%s %s %s %v", f.Type, f.Severity, f.Client.Match, f.Client.Resource, names))
		if u := f.Client.User; u != "" {
			cl, known := byUser[u]
			switch {
			case !known:
				t.Errorf("finding names %q, which is not a client of this run: %+v", u, f)
			case cl.progressing && f.Type == "StuckInitialEvents":
				t.Errorf("progressing client %s named as stuck: %+v", u, f)
			case !cl.stuck && !cl.progressing:
				t.Errorf("healthy client %s named in a finding: %+v", u, f)
			case cl.stuck && f.Type == "SlowInitialEvents" && f.Severity == "info":
				t.Errorf("stuck client %s named as progressing: %+v", u, f)
			}
		}
		for _, cd := range f.Candidates {
			if cl := byUser[cd.User]; !cl.stuck && !cl.progressing {
				t.Errorf("healthy client %s (no initial-events watch) among the candidates: %+v", cd.User, f)
			}
		}
		if f.Client.Resource == "configmaps" || slices.ContainsFunc(f.Candidates, func(c api.Request) bool { return c.Resource == "configmaps" }) {
			cmFindings++
			if f.Client.Match != "exact" || f.Client.User != cmUser || f.Client.Resource != "configmaps" {
				t.Errorf("the only initial-phase watcher of configmaps (%s) is matched %q to %q (candidates %+v), want exact to %s", cmUser, f.Client.Match, f.Client.User, f.Candidates, cmUser)
			}
		}
	}
	if cmFindings != 1 {
		t.Errorf("%d findings involve configmaps, want 1 (the %s watch)", cmFindings, cmUser)
	}
	var missing []string
	for _, cl := range clients {
		if cl.stuck && !appeared[cl.user] {
			missing = append(missing, cl.user)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("stuck clients %v appear in no finding, by name or among the candidates", missing)
	}
	sort.Strings(summary)
	t.Logf("findings:\n  %s", strings.Join(summary, "\n  "))
}

// startProcess starts a client program in a process group of its own and
// returns what stops it (the whole group: a pipeline's every member).
func startProcess(t *testing.T, name string, args []string, dir string, env ...string) (func(), error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	return func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		if s := strings.TrimSpace(stderr.String()); s != "" && !strings.Contains(s, "signal") {
			t.Logf("%s stderr: %s", name, s)
		}
	}, nil
}

// waitNoInitialWatches waits until APF holds no executing watch of the
// run's clients, so the next run starts from a clean server.
func waitNoInitialWatches(t *testing.T, c *cluster.Cluster) {
	t.Helper()
	admin := clientsetFor(t, c, cluster.UserAdmin).Discovery().RESTClient()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var users []string
	err := wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		reqs, err := probe.APFRequests(ctx, admin)
		if err != nil {
			return false, err
		}
		users = executingWatchUsersAll(reqs)
		return len(users) == 0, nil
	})
	if err != nil {
		t.Errorf("watches of the run still executing after its clients stopped: %v (%v)", users, err)
	}
}

// executingWatchUsersAll lists the users of the executing watch requests
// of the attribution workload (the API server's own are left out).
func executingWatchUsersAll(reqs []probe.APFRequest) []string {
	var users []string
	for _, r := range reqs {
		if r.Executing() && strings.EqualFold(r.Verb, "watch") && !strings.HasPrefix(r.UserName, "system:") {
			users = append(users, r.UserName)
		}
	}
	sort.Strings(users)
	return users
}

// attrClientsDir is test/e2e/clients with @kubernetes/client-node
// installed by hack/install-clients.sh (run.sh runs it before the tests,
// with network); the test fails, never skips, without it.
func attrClientsDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("clients")
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	for _, tool := range []string{"curl", "kubectl", "node", "dd", "sleep"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@kubernetes", "client-node", "package.json")); err != nil {
		missing = append(missing, "@kubernetes/client-node")
	}
	if len(missing) > 0 {
		t.Fatalf("missing %v: run test/e2e/hack/install-clients.sh (test/e2e/run.sh does) before the tests", missing)
	}
	return dir
}

func mustClientset(t *testing.T, cfg *rest.Config) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// createConfigMaps makes attrConfigMaps configmaps of random base64 in
// attrNamespace (CreatePods made the namespace).
func createConfigMaps(ctx context.Context, cfg *rest.Config) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	raw := make([]byte, attrConfigMapSize*3/4)
	for i := range attrConfigMaps {
		if _, err := rand.Read(raw); err != nil {
			return err
		}
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("payload-%03d", i), Namespace: attrNamespace},
			Data:       map[string]string{"payload": base64.StdEncoding.EncodeToString(raw)},
		}
		if _, err := cs.CoreV1().ConfigMaps(attrNamespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create configmap %s: %w", cm.Name, err)
		}
	}
	return nil
}
