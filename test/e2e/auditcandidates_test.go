package e2e

import (
	"net"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/test/e2e/cluster"
	"github.com/watch-doctor/watch-doctor/test/e2e/workload"
)

// TestAuditLogJoinsEachCandidate: two clients of two users, from two
// source addresses (127.0.0.2 and 127.0.0.4 on lo), start the same watch
// of the same path together and both stop reading in their initial
// events. The goroutine dump cannot tell which watcher is whose (their
// waits and starts agree), so a finding is "one of these 2"; with the
// real server's audit log each candidate carries its own source address,
// user agent and pod, never the other's.
func TestAuditLogJoinsEachCandidate(t *testing.T) {
	t.Parallel()
	c, admin, ctx, logPath, pods := startAuditedCluster(t)
	bindAuditRole(t, admin)
	type client struct{ user, ip, ua, pod string }
	clients := []client{
		{cluster.UserSlowInformer, "127.0.0.2", "stuck-a/e2e", "informer-7d9f-a2k4q"},
		{cluster.UserPacedReader, "127.0.0.4", "stuck-b/e2e", "informer-7d9f-b7m2x"},
	}
	for _, cl := range clients {
		notRunningPod(t, admin.CoreV1().RESTClient(), pods.Namespace, cl.pod, cl.ip)
	}
	for _, cl := range clients {
		cfg, err := c.RESTConfig(cl.user)
		if err != nil {
			t.Fatal(err)
		}
		wc := rest.CopyConfig(cfg)
		wc.UserAgent = cl.ua
		w, err := workload.StartWatcher(ctx, wc, workload.WatcherOptions{Name: cl.ua, Namespace: pods.Namespace, ListOptions: workload.InitialEventsListOptions(), Behaviour: workload.StopAfterFirst, SourceIP: net.ParseIP(cl.ip)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
	}
	adminRC := clientsetFor(t, c, cluster.UserAdmin).Discovery().RESTClient()
	if err := waitStuckAMinute(adminRC, time.Now().Add(6*time.Minute)); err != nil {
		t.Fatalf("no watcher showed a one-minute wait: %v", err)
	}
	res := runPlugin(t, c, cluster.UserWatchDoctor, "diagnose", "--apiserver", instanceAddress(t, c), "--interval", pluginInterval, "-o", "json", "--audit-log", logPath)
	if res.ExitCode != 1 {
		t.Fatalf("exit %d, want 1 (a critical finding)\nstderr:\n%s", res.ExitCode, res.Stderr)
	}
	rep := decode(t, res)
	want := map[string]client{}
	for _, cl := range clients {
		want[cl.user] = cl
	}
	ambiguous, seen := 0, map[string]bool{}
	for i, f := range rep.Findings {
		if f.Type != api.StuckInitialEvents || f.Client == nil || f.Client.Match != api.MatchAmbiguous {
			continue
		}
		ambiguous++
		for _, cd := range f.Candidates {
			cl, ok := want[cd.User]
			if !ok {
				continue
			}
			seen[cd.User] = true
			if len(cd.SourceIPs) != 1 || cd.SourceIPs[0] != cl.ip || cd.UserAgent != cl.ua || len(cd.Pods) != 1 || cd.Pods[0].Name != cl.pod || cd.Pods[0].IP != cl.ip {
				t.Errorf("finding %d: candidate %s carries source %v, user agent %q, pods %+v; want [%s], %s, pod %s", i, cd.User, cd.SourceIPs, cd.UserAgent, cd.Pods, cl.ip, cl.ua, cl.pod)
			}
		}
		t.Logf("finding %d: %s\nevidence: %q", i, f.Message, f.Evidence)
	}
	if ambiguous == 0 {
		t.Fatalf("no ambiguous StuckInitialEvents finding: the dump told the two clients apart, and this test needs one that could not\n%s", res.Stdout)
	}
	if len(seen) != len(clients) {
		t.Errorf("the ambiguous findings' candidates hold %v, want both stuck clients", seen)
	}
}
