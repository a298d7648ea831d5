package e2e

// A client slower than its resource: the cacher closes its watch for a
// full input buffer ("Forcing configmaps watcher close due to
// unresponsiveness", k8s.io/apiserver v0.37.2
// pkg/storage/cacher/cache_watcher.go:214), the client drains, watches
// again from the start, and loops. The plugin must report the loop with
// the client named from APF and /metrics alone (--profiling=false), and
// never the fast client on the same resource.

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/test/e2e/cluster"
	"github.com/watch-doctor/watch-doctor/test/e2e/workload"
)

// The workload of TestWatchClosedByServerLoop, sized so that each cycle of
// the loop is short (about 18 s) and ends in a closure. The cacher's input
// buffer of a watcher holds 10 events (minWatchChanSize:
// watch_cache_history.go:197-211, a small history), which two updates a
// second fill in 5 s. The slow client reads 4 events a second: the replay
// of relistObjects configmaps of relistObjectBytes (30 MB) is all sent to
// it (the 4 MiB stream window and the result buffer hold about 18 of them)
// only after about 10 s, so its watcher, still replaying, is closed first:
// gracefully (cache_watcher.go:198-207, its bookmark was received), it
// finishes the replay and its input buffer, 70 events, and ends. The
// client reads them (about 18 s) and watches again. Measured at 60 objects,
// 2 events/s and an update a second: the audit log's watches ended after
// 29 s, the next began 7 s later, 70 events read per watch.
const (
	relistNamespace   = "relist"
	relistObjects     = 60
	relistObjectBytes = 500 * 1024
	relistReadEvery   = 250 * time.Millisecond
	relistWriteEvery  = 500 * time.Millisecond
	relistSamples     = 10
	relistSampleEvery = 7 * time.Second
)

// relistClient watches the configmaps of a namespace with initial events
// and, each time the server closes its watch, watches again from the
// start: a client-go informer that never finished its initial list.
//
// Thread safety: the counters may be read from any goroutine.
type relistClient struct {
	name    string
	watches atomic.Int64 // watch requests started
	closed  atomic.Int64 // watches the server ended
	events  atomic.Int64
	done    chan struct{}
	cancel  context.CancelFunc
	// logf says when each watch began and ended (the loop's cycles).
	logf func(format string, args ...any)
}

// startRelistClient runs the client as user, reading one event per every
// (0: as fast as they come), on a connection of its own.
func startRelistClient(ctx context.Context, t *testing.T, c *cluster.Cluster, user string, every time.Duration) *relistClient {
	t.Helper()
	cfg, err := c.RESTConfig(user)
	if err != nil {
		t.Fatal(err)
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Dial = (&net.Dialer{Timeout: 30 * time.Second}).DialContext
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	rc := &relistClient{name: user, done: make(chan struct{}), cancel: cancel, logf: t.Logf}
	go func() {
		defer close(rc.done)
		for ctx.Err() == nil {
			w, err := cs.CoreV1().ConfigMaps(relistNamespace).Watch(ctx, workload.InitialEventsListOptions())
			if err != nil {
				select { // retried after a second, as client-go's backoff would
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
				continue
			}
			n, began := rc.watches.Add(1), time.Now()
			if rc.consume(ctx, w.ResultChan(), every) {
				rc.logf("%s: the server ended watch %d after %v (%d events read so far)", rc.name, n, time.Since(began).Round(100*time.Millisecond), rc.events.Load())
			}
			w.Stop()
		}
	}()
	t.Cleanup(rc.stop)
	return rc
}

// consume reads ch, one event per every, until the server ends it (true)
// or ctx is done.
func (rc *relistClient) consume(ctx context.Context, ch <-chan watch.Event, every time.Duration) bool {
	var tick <-chan time.Time
	if every > 0 {
		tk := time.NewTicker(every)
		defer tk.Stop()
		tick = tk.C
	}
	for {
		select {
		case <-ctx.Done():
			return false
		case _, ok := <-ch:
			if !ok {
				rc.closed.Add(1)
				return true
			}
			rc.events.Add(1)
		}
		if tick != nil {
			select {
			case <-ctx.Done():
				return false
			case <-tick:
			}
		}
	}
}

func (rc *relistClient) stop() {
	rc.cancel()
	<-rc.done
}

// TestWatchClosedByServerLoop: on a kube-apiserver with --profiling=false
// and audit logging, paced-reader watches the configmaps of a namespace
// updated relistWriteEvery and reads relistReadEvery; healthy-client
// watches the same and reads everything. serve looks every 5 s from the
// start. Once the server closed paced-reader's watch
// (apiserver_terminated_watchers_total{resource="configmaps"}, and the
// client's own count of its watches), diagnose, and collect then analyze
// of the bundle, sampling the same span at once, each report the loop as a
// critical WatchClosedByServer naming paced-reader (likely), from APF and
// /metrics alone; diagnose with --audit-log, and analyze of the same
// bundle with it, also show paced-reader's watches ending early, and
// nobody else's; diagnose --audit-log as a user refused the APF dumps ties
// the loop from /metrics and the audit log alone; serve's
// watchdoctor_watch_closures_by_client_total names paced-reader; and
// healthy-client is in no finding and in no series.
func TestWatchClosedByServerLoop(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	policy, auditLog := filepath.Join(dir, "audit-policy.yaml"), filepath.Join(dir, "audit.log")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	c := cluster.StartForTest(t, cluster.Options{Logf: t.Logf, ExtraAPIServerArgs: []string{"--profiling=false", "--audit-policy-file=" + policy, "--audit-log-path=" + auditLog}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	admin, err := c.Clientset(cluster.UserAdmin)
	if err != nil {
		t.Fatal(err)
	}
	slowUser, fastUser := cluster.UserPacedReader, cluster.UserHealthyClient
	if err := relistWorkload(ctx, admin, slowUser, fastUser); err != nil {
		t.Fatal(err)
	}
	bindAuditRole(t, admin)
	bindMetricsOnly(ctx, t, admin, cluster.UserNoDebug)
	stopWrites := startRelistWrites(ctx, t, admin)
	defer stopWrites()
	fast := startRelistClient(ctx, t, c, fastUser, 0)
	slow := startRelistClient(ctx, t, c, slowUser, relistReadEvery)
	began := time.Now()
	addr, serveLog := runServeLogged(t, func(bin string, args ...string) *exec.Cmd { return exec.Command(bin, args...) }, c.Kubeconfig(cluster.UserWatchDoctor))

	// The loop has begun once the server closed the slow client's watch
	// and it watched again.
	rcAdmin := admin.CoreV1().RESTClient()
	var closures float64
	err = wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		n, err := terminatedWatchersOf(ctx, rcAdmin, "configmaps")
		if err != nil {
			return false, err
		}
		closures = n
		return n >= 1 && slow.closed.Load() >= 1 && slow.watches.Load() >= 2, nil
	})
	if err != nil {
		t.Fatalf("the server closed %v configmaps watchers, %s was closed %d times and watched %d times in %v: %v", closures, slowUser, slow.closed.Load(), slow.watches.Load(), time.Since(began).Round(time.Second), err)
	}
	logClients := func(when string) {
		n, _ := terminatedWatchersOf(ctx, rcAdmin, "configmaps")
		t.Logf("%s, %v after the clients started: apiserver_terminated_watchers_total{resource=\"configmaps\"} %v; %s watched %d times, closed %d, %d events; %s watched %d times, closed %d, %d events",
			when, time.Since(began).Round(time.Second), n, slowUser, slow.watches.Load(), slow.closed.Load(), slow.events.Load(), fastUser, fast.watches.Load(), fast.closed.Load(), fast.events.Load())
	}
	logClients("the loop began")

	// Four samplers of the same span, at once (processes, not parallel
	// subtests: -parallel would queue them): relistSamples samples
	// relistSampleEvery apart span two cycles of the loop or more, and
	// catch the slow client replaying after the first.
	sampling := []string{"--samples", strconv.Itoa(relistSamples), "--interval", relistSampleEvery.String()}
	bundle := filepath.Join(dir, "bundle")
	asJSON := []string{"--output", "json", "--fail-on", "none"}
	as := func(user string) pluginRun { return pluginRun{kubeconfig: c.Kubeconfig(user), user: user} }
	res := runPluginsAtOnce(t, []pluginRun{as(cluster.UserWatchDoctor), as(cluster.UserWatchDoctor), as(cluster.UserNoDebug), as(cluster.UserWatchDoctor)}, [][]string{
		slices.Concat([]string{"diagnose"}, sampling, asJSON),
		slices.Concat([]string{"diagnose", "--audit-log", auditLog}, sampling, asJSON),
		slices.Concat([]string{"diagnose", "--apiserver", instanceAddress(t, c), "--audit-log", auditLog}, sampling, asJSON),
		slices.Concat([]string{"collect", "-d", bundle}, sampling),
	})
	checkClosedLoop(t, "diagnose", res[0], slowUser, fastUser)
	checkEarlyEnds(t, checkClosedLoop(t, "diagnose --audit-log", res[1], slowUser, fastUser), slowUser, fastUser)

	// As no-debug, given /metrics and pods alone: the APF dumps refused,
	// the loop is tied from the audit log.
	if d := res[2]; d.ExitCode != 2 || !strings.Contains(d.Stderr, "dump_requests") {
		t.Errorf("diagnose refused the APF dumps: exit %d, want 2 (incomplete), naming dump_requests\n%s", d.ExitCode, d.Stderr)
	}
	f := checkClosedLoop(t, "diagnose --audit-log, no APF dump", res[2], slowUser, fastUser)
	if f != nil && !strings.Contains(f.Message, "and the audit log shows "+slowUser+"'s watches of it ending long before their timeoutSeconds") {
		t.Errorf("the loop is not tied from the audit log alone: %s", f.Message)
	}

	// collect: incomplete (exit 2) for the goroutine dumps --profiling=false
	// refuses, and for nothing else.
	refused := fmt.Sprintf("error: %d request(s) failed, the result is incomplete; first: %s: /debug/pprof is not served: profiling is disabled on this API server (--profiling=false)", relistSamples, instanceAddress(t, c))
	if col := res[3]; col.ExitCode != 2 || !strings.Contains(col.Stderr, refused) {
		t.Errorf("collect: exit %d, want 2 for the %d goroutine dumps refused (%q)\n%s", col.ExitCode, relistSamples, refused, col.Stderr)
	}
	logClients("sampled")
	if _, err := os.Stat(bundle); err == nil {
		an := runPlugin(t, c, cluster.UserWatchDoctor, "analyze", bundle, "--output", "json", "--fail-on", "none")
		checkClosedLoop(t, "analyze", an, slowUser, fastUser)
		an = runPlugin(t, c, cluster.UserWatchDoctor, "analyze", bundle, "--audit-log", auditLog, "--output", "json", "--fail-on", "none")
		f := checkClosedLoop(t, "analyze --audit-log", an, slowUser, fastUser)
		checkEarlyEnds(t, f, slowUser, fastUser)
	}

	// serve: its looks since the clients started tie closures to the
	// slow client (at the look that counted them, or a later one that
	// saw it back).
	var last string
	err = wait.PollUntilContextTimeout(ctx, 2*time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		text, err := scrape(ctx, addr)
		if err != nil {
			return false, nil
		}
		last = text
		for _, s := range parseScrape(t, text)["watchdoctor_watch_closures_by_client_total"] {
			if s.labels["resource"] == "configmaps" && s.labels["user"] == slowUser && s.value >= 1 {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Errorf("serve never counted a closure of configmaps tied to %s: %v; its last scrape's closures:\n%s", slowUser, err, grepLines(last, "watchdoctor_watch_closures"))
	}
	for _, s := range parseScrape(t, last)["watchdoctor_watch_closures_by_client_total"] {
		if s.labels["user"] == fastUser {
			t.Errorf("serve ties closures to %s: %v", fastUser, s.labels)
		}
	}
	t.Logf("serve: %s", strings.ReplaceAll(grepLines(last, "watchdoctor_watch_closures"), "\n", "; "))
	// Nor among the candidates of a closure counted as ambiguous.
	b, err := os.ReadFile(serveLog)
	if err != nil {
		t.Fatal(err)
	}
	records := grepLines(string(b), `{"time"`, "closed watches")
	t.Logf("serve's records of closures:\n%s", records)
	if strings.Contains(records, `"`+fastUser+`"`) {
		t.Errorf("serve names %s among the clients of closures:\n%s", fastUser, records)
	}
	logClients("the end")
	if fast.closed.Load() != 0 {
		t.Errorf("%s's watch was closed %d times: the fast client must keep up", fastUser, fast.closed.Load())
	}
}

// checkClosedLoop checks a report: a WatchClosedByServer finding of
// configmaps naming slow, critical (two closures or more), and no finding
// naming fast. It returns the finding, nil when there is none.
func checkClosedLoop(t *testing.T, what string, res pluginResult, slow, fast string) *api.Finding {
	t.Helper()
	var r api.Report
	if err := json.Unmarshal([]byte(res.Stdout), &r); err != nil {
		t.Errorf("%s: exit %d, not a JSON report: %v\nstderr:\n%s", what, res.ExitCode, err, res.Stderr)
		return nil
	}
	var found *api.Finding
	for i, f := range r.Findings {
		if f.Client != nil && f.Client.User == fast || contains(f.CandidateUsers(), fast) {
			t.Errorf("%s: a %s finding names the fast client %s: %s", what, f.Type, fast, f.Message)
		}
		if f.Type == api.WatchClosedByServer && f.Closures != nil && f.Closures.Resource == "configmaps" {
			found = &r.Findings[i]
		}
	}
	if found == nil {
		t.Errorf("%s: no WatchClosedByServer finding of configmaps; findings %d, advice:\n%s\nstderr:\n%s", what, len(r.Findings), strings.Join(r.Advice, "\n"), res.Stderr)
		return nil
	}
	b, _ := json.MarshalIndent(found, "", "  ")
	t.Logf("%s: %s", what, b)
	if found.Client == nil || found.Client.User != slow || found.Client.Match != api.MatchLikely {
		t.Errorf("%s: the loop is not tied to %s alone (likely): client %+v, candidates %v", what, slow, found.Client, found.CandidateUsers())
	}
	if found.Severity != api.SeverityCritical || found.Closures.Closed < 2 || found.Closures.Returns < 1 {
		t.Errorf("%s: severity %s, %d closures, %d returns: want critical, a loop of two closures or more and a return", what, found.Severity, found.Closures.Closed, found.Closures.Returns)
	}
	return found
}

// checkEarlyEnds checks that f's evidence has the audit log's watches of
// slow ending long before their timeoutSeconds, and none of fast's, and
// that its message says the audit log ties them too.
func checkEarlyEnds(t *testing.T, f *api.Finding, slow, fast string) {
	t.Helper()
	if f == nil {
		return
	}
	if !strings.Contains(f.Message, "; the audit log agrees: ") && !strings.Contains(f.Message, "the audit log shows only "+slow+"'s ending") {
		t.Errorf("the message does not say what the audit log shows: %s", f.Message)
	}
	var early []string
	for _, ev := range f.Evidence {
		if strings.HasPrefix(ev, "audit log (") {
			early = append(early, ev)
		}
	}
	ofSlow := false
	for _, ev := range early {
		switch {
		case strings.Contains(ev, " by "+fast+" ended long before"):
			t.Errorf("the audit log's early ends name the fast client %s: %s", fast, ev)
		case strings.Contains(ev, " by "+slow+" ended long before"):
			ofSlow = true
		}
	}
	if !ofSlow {
		t.Errorf("no evidence of %s's watches ending early in the audit log; the finding's evidence:\n%s", slow, strings.Join(f.Evidence, "\n"))
	}
}

// bindMetricsOnly lets user read /metrics and list pods (for --audit-log)
// and nothing of the debug endpoints: a diagnosis from /metrics and the
// audit log alone.
func bindMetricsOnly(ctx context.Context, t *testing.T, admin kubernetes.Interface, user string) {
	t.Helper()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "watch-doctor-e2e:metrics-only"}, Rules: []rbacv1.PolicyRule{
		{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}},
	}}
	if _, err := admin.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bind := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, bind, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// relistWorkload makes the namespace, lets the two users read its
// configmaps, and creates relistObjects of relistObjectBytes each.
func relistWorkload(ctx context.Context, admin kubernetes.Interface, users ...string) error {
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: relistNamespace}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "configmap-reader", Namespace: relistNamespace},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}}}}
	if _, err := admin.RbacV1().Roles(relistNamespace).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return err
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "configmap-reader", Namespace: relistNamespace},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name}}
	for _, u := range users {
		rb.Subjects = append(rb.Subjects, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: u})
	}
	if _, err := admin.RbacV1().RoleBindings(relistNamespace).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		return err
	}
	raw := make([]byte, relistObjectBytes*3/4)
	for i := 0; i < relistObjects; i++ {
		if _, err := io.ReadFull(rand.Reader, raw); err != nil {
			return err
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("payload-%03d", i)}, Data: map[string]string{"payload": base64.StdEncoding.EncodeToString(raw)}}
		if _, err := admin.CoreV1().ConfigMaps(relistNamespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create configmap %d: %w", i, err)
		}
	}
	return nil
}

// startRelistWrites updates one configmap every relistWriteEvery, round
// robin (an annotation: the event carries the whole 500 KB object), until
// the returned func is called.
func startRelistWrites(ctx context.Context, t *testing.T, admin kubernetes.Interface) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tk := time.NewTicker(relistWriteEvery)
		defer tk.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tk.C:
			}
			patch := fmt.Sprintf(`{"metadata":{"annotations":{"tick":"%d"}}}`, i)
			if _, err := admin.CoreV1().ConfigMaps(relistNamespace).Patch(ctx, fmt.Sprintf("payload-%03d", i%relistObjects), types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil && ctx.Err() == nil {
				t.Logf("update configmap: %v", err)
			}
		}
	}()
	return func() { cancel(); <-done }
}

// scrape reads serve's /metrics.
func scrape(ctx context.Context, addr string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	return string(b), err
}

// grepLines are the lines of text that start with prefix and contain
// each of also.
func grepLines(text, prefix string, also ...string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) && containsAll(l, also...) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
