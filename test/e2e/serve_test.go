package e2e

// kubectl watch-doctor serve, scraped by a real Prometheus with the shipped
// rules: a stuck watch drives WatchDoctorWatchInitializingTooLong to
// pending, then firing, with its user and resource; the alert resolves when
// the client dies; a healthy client and a slow one never fire it.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/watch-doctor/watch-doctor/test/e2e/cluster"
	"github.com/watch-doctor/watch-doctor/test/e2e/workload"
)

const (
	// The manifests of deploy/ and the shipped alert rules.
	deployDir      = "../../deploy"
	shippedRules   = "../../deploy/prometheus/rules.yaml"
	serveNamespace = "watch-doctor"
	serveSA        = "watch-doctor"
	tooLongAlert   = "WatchDoctorWatchInitializingTooLong"
	// tooLongAfter is the alert's threshold in rules.yaml (> 60 s).
	tooLongAfter = 60.0
)

func TestServeAlertsWithPrometheus(t *testing.T) {
	// Mostly waits (the alert's threshold and for-duration, Prometheus's
	// scrapes): run beside the other tests that wait (run.sh -parallel).
	t.Parallel()
	c := cluster.StartForTest(t, cluster.Options{})
	admin, err := c.LoaderClientset(500)
	if err != nil {
		t.Fatal(err)
	}
	pods := workload.PodsOptions{Namespace: "serve-e2e", Count: 1000, AnnotationBytes: 20 * 1024, Workers: 16}
	if err := workload.CreatePods(context.Background(), admin, pods); err != nil {
		t.Fatalf("create pods: %v", err)
	}
	kubeconfig := serveAccountKubeconfig(t, c, admin)
	metricsAddr := startServe(t, kubeconfig)
	prom := startPrometheus(t, metricsAddr)

	// The three clients, at once: stuck, slow (done well within 60 s),
	// healthy. Each its own user, own connection.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	startWatcher := func(user string, b workload.Behaviour, interval time.Duration) *workload.Watcher {
		return startInitialEventsWatcher(ctx, t, c, pods.Namespace, user, b, interval)
	}
	stuck := startWatcher(cluster.UserSlowInformer, workload.StopAfterFirst, 0)
	slow := startWatcher(cluster.UserPacedReader, workload.Paced, 20*time.Millisecond)
	healthy := startWatcher(cluster.UserHealthyClient, workload.ReadAll, 0)
	started := time.Now()

	var seen []alertState
	watchAlerts := func(until func([]alertState) bool, limit time.Duration) {
		t.Helper()
		err := wait.PollUntilContextTimeout(context.Background(), 2*time.Second, limit, true, func(ctx context.Context) (bool, error) {
			as, err := prom.alerts(ctx)
			if err != nil {
				t.Logf("alerts: %v", err)
				return false, nil
			}
			for _, a := range as {
				if a.Labels["alertname"] == tooLongAlert && (len(seen) == 0 || !seen[len(seen)-1].same(a)) {
					t.Logf("%s after %s: %s user=%q resource=%q apiserver=%q", tooLongAlert, time.Since(started).Round(time.Second), a.State, a.Labels["user"], a.Labels["resource"], a.Labels["apiserver"])
				}
			}
			seen = append(seen, as...)
			return until(as), nil
		})
		if err != nil {
			t.Fatalf("after %s: %v; alerts seen: %+v", time.Since(started).Round(time.Second), err, seen)
		}
	}
	has := func(as []alertState, user, state string) bool {
		for _, a := range as {
			if a.Labels["alertname"] == tooLongAlert && a.Labels["user"] == user && a.State == state {
				return true
			}
		}
		return false
	}
	// Pending once the watch is past 60 s, firing 2 m later.
	watchAlerts(func(as []alertState) bool { return has(as, cluster.UserSlowInformer, "pending") }, 3*time.Minute)
	pendingAt := time.Since(started)
	watchAlerts(func(as []alertState) bool { return has(as, cluster.UserSlowInformer, "firing") }, 4*time.Minute)
	firingAt := time.Since(started)
	t.Logf("pending after %s, firing after %s", pendingAt.Round(time.Second), firingAt.Round(time.Second))
	if firingAt-pendingAt < 2*time.Minute-10*time.Second {
		t.Errorf("firing %s after pending: the rule's for: is 2m", (firingAt - pendingAt).Round(time.Second))
	}
	for _, a := range seen {
		if a.Labels["alertname"] == tooLongAlert && a.Labels["user"] == cluster.UserSlowInformer {
			if a.Labels["resource"] != "pods" || a.Labels["apiserver"] == "" || a.Labels["severity"] != "warning" {
				t.Errorf("alert labels %v: want resource=pods, an apiserver, severity=warning", a.Labels)
			}
			if !strings.Contains(a.Annotations["summary"], cluster.UserSlowInformer) || !strings.Contains(a.Annotations["description"], a.Labels["apiserver"]) {
				t.Errorf("annotations %v do not name the user and the instance", a.Annotations)
			}
		}
	}

	// The client is killed: its request ends, the series goes, the alert
	// resolves.
	stuck.Stop()
	killedAt := time.Now()
	watchAlerts(func(as []alertState) bool {
		return !has(as, cluster.UserSlowInformer, "firing") && !has(as, cluster.UserSlowInformer, "pending")
	}, time.Minute)
	t.Logf("resolved %s after the client was killed", time.Since(killedAt).Round(time.Second))

	for _, a := range seen {
		if u := a.Labels["user"]; a.Labels["alertname"] == tooLongAlert && u != cluster.UserSlowInformer {
			t.Errorf("%s %s for %q: only the stuck client may fire it", tooLongAlert, a.State, u)
		}
	}
	// The slow client was seen initializing, and finished within 60 s: the
	// "never fires" above is not vacuous.
	oldest, err := prom.query(context.Background(), fmt.Sprintf(`max_over_time(watchdoctor_user_oldest_initializing_age_seconds{user=%q}[30m])`, cluster.UserPacedReader))
	if err != nil {
		t.Fatal(err)
	}
	if len(oldest) != 1 || oldest[0] >= tooLongAfter {
		t.Errorf("the slow client's oldest initializing age as scraped: %v, want one value under %g s", oldest, tooLongAfter)
	}
	t.Logf("slow client: seen initializing for at most %v s; events read: slow %d, healthy %d", oldest, slow.Events(), healthy.Events())
	if healthy.Events() < int64(pods.Count) || slow.Events() < int64(pods.Count) {
		t.Errorf("events read: slow %d, healthy %d, want at least %d each (the initial events)", slow.Events(), healthy.Events(), pods.Count)
	}
}

// serveAccountKubeconfig applies deploy/ for real, checks that the
// ServiceAccount may do no more than deploy/rbac.yaml grants, and writes a
// kubeconfig with a TokenRequest token of that ServiceAccount.
func serveAccountKubeconfig(t *testing.T, c *cluster.Cluster, admin kubernetes.Interface) string {
	t.Helper()
	for _, args := range [][]string{
		{"apply", "-k", deployDir},
		// No prometheus-operator CRDs here (kubectl cannot even map their
		// kinds): the monitoring objects are only built.
		{"kustomize", filepath.Join(deployDir, "monitoring")},
	} {
		out, err := exec.Command("kubectl", append(args, "--kubeconfig", c.Kubeconfig(cluster.UserAdmin))...).CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		if args[0] == "apply" {
			t.Logf("kubectl %s:\n%s", strings.Join(args, " "), out)
		}
	}
	ctx := context.Background()
	tr, err := admin.CoreV1().ServiceAccounts(serveNamespace).CreateToken(ctx, serveSA, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest for %s/%s: %v", serveNamespace, serveSA, err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["e2e"] = &clientcmdapi.Cluster{Server: c.Server(), CertificateAuthority: c.CAFile()}
	cfg.AuthInfos["serve"] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts["serve"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: "serve"}
	cfg.CurrentContext = "serve"
	path := filepath.Join(t.TempDir(), "serve.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	// The token is the ServiceAccount's, and it may read the debug
	// endpoints but not pods.
	rc, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		attrs authorizationv1.SelfSubjectAccessReviewSpec
		want  bool
	}{
		{authorizationv1.SelfSubjectAccessReviewSpec{NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/debug/pprof/goroutine", Verb: "get"}}, true},
		{authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{Group: "discovery.k8s.io", Resource: "endpointslices", Verb: "list", Namespace: "default"}}, true},
		{authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{Resource: "pods", Verb: "list"}}, false},
		{authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{Resource: "secrets", Verb: "get", Namespace: serveNamespace}}, false},
	} {
		r, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{Spec: tc.attrs}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Status.Allowed != tc.want {
			t.Errorf("the ServiceAccount token: allowed %+v = %v, want %v", tc.attrs, r.Status.Allowed, tc.want)
		}
	}
	return path
}

// startServe runs the built plugin's serve with kubeconfig, looking every
// 5 s (with the extra flags), and returns the address it serves on once
// /readyz answers 200. It is stopped with SIGTERM at the end of the test
// and must exit 0.
func startServe(t *testing.T, kubeconfig string, extra ...string) string {
	t.Helper()
	a := runServe(t, func(bin string, args ...string) *exec.Cmd { return exec.Command(bin, args...) }, kubeconfig, extra...)
	err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		return httpStatus(ctx, "http://"+a+"/readyz") == http.StatusOK, nil
	})
	if err != nil {
		t.Fatalf("serve's /readyz never answered 200: %v", err)
	}
	return a
}

// runServe starts the built plugin's serve through command (exec.Command,
// or a ClientNetwork's), listening on a free port of its loopback, and
// returns the address its log says it serves on. At the end of the test
// it is stopped with SIGTERM and must exit 0, having shut down gracefully.
func runServe(t *testing.T, command func(bin string, args ...string) *exec.Cmd, kubeconfig string, extra ...string) string {
	t.Helper()
	addr, _ := runServeLogged(t, command, kubeconfig, extra...)
	return addr
}

// runServeLogged is runServe, and returns the file serve's log is copied
// to as it comes.
func runServeLogged(t *testing.T, command func(bin string, args ...string) *exec.Cmd, kubeconfig string, extra ...string) (string, string) {
	t.Helper()
	bin := os.Getenv(envPluginBin)
	if bin == "" {
		t.Fatalf("$%s is not set: build the plugin (make build) and export %s, or run `make e2e`", envPluginBin, envPluginBin)
	}
	args := append([]string{"serve", "--kubeconfig", kubeconfig, "--listen-address", "127.0.0.1:0", "--interval", "5s", "--jitter", "0", "--request-timeout", "20s"}, extra...)
	cmd := command(bin, args...)
	logPath := filepath.Join(t.TempDir(), "serve.log")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		logFile, _ := os.Create(logPath)
		defer logFile.Close()
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			fmt.Fprintln(logFile, sc.Text())
			var rec struct {
				Msg     string `json:"msg"`
				Address string `json:"address"`
			}
			if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Msg == "serving" {
				addr <- rec.Address
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		err := cmd.Wait()
		<-copied
		log, _ := os.ReadFile(logPath)
		if err != nil {
			t.Errorf("serve after SIGTERM: %v (want exit 0)", err)
		}
		if !strings.Contains(string(log), `"msg":"shutting down"`) {
			t.Errorf("serve did not shut down gracefully; its log:\n%s", tail(string(log), 4000))
		}
		if t.Failed() {
			t.Logf("serve's log (tail):\n%s", tail(string(log), 8000))
		}
	})
	select {
	case a := <-addr:
		return a, logPath
	case <-time.After(time.Minute):
		t.Fatal("serve did not say where it serves within a minute")
	}
	return "", logPath
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func httpStatus(ctx context.Context, url string) int {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20))
	r.Body.Close()
	return r.StatusCode
}

// startInitialEventsWatcher starts a client-go watch of namespace's pods
// as user, asking for initial events, read as b says; it stops when the
// test ends.
func startInitialEventsWatcher(ctx context.Context, t *testing.T, c *cluster.Cluster, namespace, user string, b workload.Behaviour, interval time.Duration) *workload.Watcher {
	t.Helper()
	cfg, err := c.RESTConfig(user)
	if err != nil {
		t.Fatal(err)
	}
	w, err := workload.StartWatcher(ctx, cfg, workload.WatcherOptions{Name: user, Namespace: namespace, ListOptions: workload.InitialEventsListOptions(), Behaviour: b, Interval: interval})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return w
}
