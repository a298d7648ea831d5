package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/test/e2e/cluster"
	"github.com/watch-doctor/watch-doctor/test/e2e/workload"
)

// auditPolicy logs watch requests at Metadata level, nothing else.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  verbs: ["watch"]
- level: None
`

// TestAuditLogNamesTheSourceAndThePod: a real kube-apiserver writing its
// audit log, and two clients with one token from two source addresses
// (127.0.0.2 and 127.0.0.3 on lo), one stuck in its initial events, the
// other healthy, on the same path. diagnose --audit-log gives the stuck
// one's finding its source address, its user agent and the pod holding
// that address (a pod object whose status says 127.0.0.2, as a kubelet
// would write it), and puts the healthy one in no finding.
func TestAuditLogNamesTheSourceAndThePod(t *testing.T) {
	t.Parallel()
	c, admin, ctx, logPath, pods := startAuditedCluster(t)
	holder := notRunningPod(t, admin.CoreV1().RESTClient(), pods.Namespace, "informer-7d9f-x2k4q", "127.0.0.2")
	bindAuditRole(t, admin)

	cfg, err := c.RESTConfig(cluster.UserSlowInformer)
	if err != nil {
		t.Fatal(err)
	}
	start := func(ua, ip string, b workload.Behaviour) *workload.Watcher {
		wc := rest.CopyConfig(cfg)
		wc.UserAgent = ua
		w, err := workload.StartWatcher(ctx, wc, workload.WatcherOptions{Name: ua, Namespace: pods.Namespace, ListOptions: workload.InitialEventsListOptions(), Behaviour: b, SourceIP: net.ParseIP(ip)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
		return w
	}
	start("stuck-informer/e2e", "127.0.0.2", workload.StopAfterFirst)
	adminRC := clientsetFor(t, c, cluster.UserAdmin).Discovery().RESTClient()
	// A minute blocked: past the stall bound, and the healthy client's
	// request comes long after the stuck one's, so the audit join (2 s)
	// cannot mistake one for the other by time.
	if err := waitStuckAMinute(adminRC, time.Now().Add(6*time.Minute)); err != nil {
		t.Fatalf("the stuck client's watcher never showed a one-minute wait: %v", err)
	}
	healthy := start("healthy-informer/e2e", "127.0.0.3", workload.ReadAll)

	res := runPlugin(t, c, cluster.UserWatchDoctor, "diagnose", "--apiserver", instanceAddress(t, c), "--interval", pluginInterval, "-o", "json", "--audit-log", logPath)
	if res.ExitCode != 1 {
		t.Fatalf("exit %d, want 1 (a critical finding)\nstderr:\n%s", res.ExitCode, res.Stderr)
	}
	if healthy.Events() == 0 {
		t.Fatalf("the healthy client read no event: it is not the healthy reader this test needs")
	}
	rep := decode(t, res)
	var stuck *api.Finding
	for i, f := range rep.Findings {
		if f.Client == nil {
			continue
		}
		for _, ip := range f.Client.SourceIPs {
			if ip == "127.0.0.3" {
				t.Errorf("finding %d (%s) carries the healthy client's address", i, f.Type)
			}
		}
		if f.Client.UserAgent == "healthy-informer/e2e" {
			t.Errorf("finding %d (%s) carries the healthy client's user agent", i, f.Type)
		}
		if f.Type == api.StuckInitialEvents && f.Client.User == cluster.UserSlowInformer {
			stuck = &rep.Findings[i]
		}
	}
	if stuck == nil {
		t.Fatalf("no StuckInitialEvents finding names %s:\n%s", cluster.UserSlowInformer, res.Stdout)
	}
	cl := stuck.Client
	if len(cl.SourceIPs) != 1 || cl.SourceIPs[0] != "127.0.0.2" || cl.UserAgent != "stuck-informer/e2e" {
		t.Errorf("stuck client: source %v, user agent %q; want [127.0.0.2] and stuck-informer/e2e", cl.SourceIPs, cl.UserAgent)
	}
	want := api.Pod{Namespace: pods.Namespace, Name: holder, IP: "127.0.0.2", Owner: "ReplicaSet/informer-7d9f"}
	if len(cl.Pods) != 1 || cl.Pods[0] != want {
		t.Errorf("stuck client's pods %+v, want [%+v]", cl.Pods, want)
	}
	t.Logf("the stuck finding's evidence: %q", stuck.Evidence)
	everyForm(t, c, logPath, want)
}

// everyForm writes the server's audit log in each provider's form
// (auditForms) and diagnoses the cluster once per form, as one context
// each with --audit-log CONTEXT=FILE: every form gives the stuck client's
// finding its source address, user agent and pod. A file in none of the
// forms exits 2 with the error naming the forms and its first bytes.
func everyForm(t *testing.T, c *cluster.Cluster, logPath string, pod api.Pod) {
	t.Helper()
	upstream, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	forms, err := auditForms(upstream)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var names []string
	var clusters []*cluster.Cluster
	args := []string{"diagnose", "--apiserver", instanceAddress(t, c), "--interval", pluginInterval, "-o", "json", "--parallel", fmt.Sprint(len(forms))}
	for file, b := range forms {
		name := strings.TrimSuffix(file, filepath.Ext(file))
		p := filepath.Join(dir, file)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		names, clusters = append(names, name), append(clusters, c)
		args = append(args, "--audit-log", name+"="+p)
	}
	kc := mergedKubeconfig(t, names, clusters)
	args = append(args, "--kubeconfig", kc, "--contexts", strings.Join(names, ","))
	res := runPlugin(t, c, cluster.UserWatchDoctor, args...)
	var fr api.FleetReport
	if err := json.Unmarshal([]byte(res.Stdout), &fr); err != nil {
		t.Fatalf("exit %d: %v\nstderr:\n%s", res.ExitCode, err, res.Stderr)
	}
	for _, cr := range fr.Clusters {
		if cr.Report == nil {
			t.Errorf("form %s: no report: %s", cr.Context, cr.Error)
			continue
		}
		var got *api.Client
		for _, f := range cr.Report.Findings {
			if f.Type == api.StuckInitialEvents && f.Client != nil && f.Client.User == cluster.UserSlowInformer {
				got = f.Client
			}
		}
		if got == nil || len(got.SourceIPs) != 1 || got.SourceIPs[0] != "127.0.0.2" || got.UserAgent != "stuck-informer/e2e" || len(got.Pods) != 1 || got.Pods[0] != pod {
			t.Errorf("form %s: the stuck client is %+v; want source [127.0.0.2], user agent stuck-informer/e2e, pod %+v\nwarnings: %q", cr.Context, got, pod, cr.Report.Warnings)
		}
	}
	t.Logf("%d forms joined in %s", len(fr.Clusters), strings.Join(names, ", "))

	bad := filepath.Join(dir, "not-an-audit-log.txt")
	if err := os.WriteFile(bad, []byte("PriorityLevelName, FlowSchemaName\x1b[2J\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res = runPlugin(t, c, cluster.UserWatchDoctor, "diagnose", "--apiserver", instanceAddress(t, c), "--samples", "1", "-o", "json", "--audit-log", bad)
	if want := bad + " is in no audit log format read here"; res.ExitCode != 2 || !strings.Contains(res.Stderr, want) || !strings.Contains(res.Stderr, `it starts "PriorityLevelName, FlowSchemaName\x1b[2J`) {
		t.Errorf("a file in no form: exit %d, stderr:\n%s\nwant exit 2 and %q with its first bytes escaped", res.ExitCode, res.Stderr, want)
	}
	t.Logf("a file in no form: exit %d: %s", res.ExitCode, strings.TrimSpace(res.Stderr))
}

// notRunningPod creates a pod owned by a ReplicaSet and writes ip into its
// status, as a kubelet would for a running pod (there is none here: no
// scheduler, no kubelet); it returns its name.
func notRunningPod(t *testing.T, rc rest.Interface, ns, name, ip string) string {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "informer-7d9f", UID: types.UID("5b1c7f2e-0000-4000-8000-000000000001"), Controller: ptr.To(true),
		}}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "informer", Image: "informer:e2e"}}},
	}
	ctx := context.Background()
	created := &corev1.Pod{}
	if err := rc.Post().Namespace(ns).Resource("pods").Body(pod).Do(ctx).Into(created); err != nil {
		t.Fatalf("create pod %s/%s: %v", ns, name, err)
	}
	created.Status.Phase = corev1.PodRunning
	created.Status.PodIP = ip
	created.Status.PodIPs = []corev1.PodIP{{IP: ip}}
	if err := rc.Put().Namespace(ns).Resource("pods").Name(name).SubResource("status").Body(created).Do(ctx).Error(); err != nil {
		t.Fatalf("write pod %s/%s's status: %v", ns, name, err)
	}
	return name
}

// bindAuditRole creates deploy/rbac-audit.yaml's ClusterRole (list pods,
// for --audit-log) and binds it to the diagnosing user, beside the
// shipped deploy/rbac.yaml the harness binds: the plugin is given what
// the README says to give it, and no more.
func bindAuditRole(t *testing.T, admin kubernetes.Interface) {
	t.Helper()
	b, err := os.ReadFile("../../deploy/rbac-audit.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(b, &role); err != nil {
		t.Fatalf("deploy/rbac-audit.yaml: %v", err)
	}
	ctx := context.Background()
	if _, err := admin.RbacV1().ClusterRoles().Create(ctx, &role, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ClusterRole %s: %v", role.Name, err)
	}
	bind := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: cluster.UserWatchDoctor}},
	}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, bind, metav1.CreateOptions{}); err != nil {
		t.Fatalf("bind ClusterRole %s: %v", role.Name, err)
	}
}

// startAuditedCluster starts a cluster whose kube-apiserver writes its
// audit log (auditPolicy) to logPath, with the default pods created: the
// setup of the audit-log tests. The context ends with the test.
func startAuditedCluster(t *testing.T) (*cluster.Cluster, *kubernetes.Clientset, context.Context, string, workload.PodsOptions) {
	t.Helper()
	dir := t.TempDir()
	policy, logPath := filepath.Join(dir, "audit-policy.yaml"), filepath.Join(dir, "audit.log")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	c := cluster.StartForTest(t, cluster.Options{Logf: t.Logf, ExtraAPIServerArgs: []string{"--audit-policy-file=" + policy, "--audit-log-path=" + logPath}})
	admin, err := c.LoaderClientset(500)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	pods := workload.DefaultPodsOptions()
	if err := workload.CreatePods(ctx, admin, pods); err != nil {
		t.Fatal(err)
	}
	return c, admin, ctx, logPath, pods
}
