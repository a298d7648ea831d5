package e2e

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/watch-doctor/watch-doctor/test/e2e/cluster"
	"github.com/watch-doctor/watch-doctor/test/e2e/probe"
)

// TestDebugEndpointAccess checks the RBAC the plugin relies on: the
// diagnosing user may read the debug endpoints, an ordinary user may not.
func TestDebugEndpointAccess(t *testing.T) {
	c := sharedCluster(t)
	tests := []struct {
		user string
		path string
		want int
	}{
		{cluster.UserWatchDoctor, "/debug/pprof/goroutine", http.StatusOK},
		{cluster.UserWatchDoctor, "/debug/api_priority_and_fairness/dump_requests", http.StatusOK},
		{cluster.UserWatchDoctor, "/metrics", http.StatusOK},
		{cluster.UserWatchDoctor, "/version", http.StatusOK},
		{cluster.UserNoDebug, "/debug/pprof/goroutine", http.StatusForbidden},
		{cluster.UserNoDebug, "/debug/api_priority_and_fairness/dump_requests", http.StatusForbidden},
		{cluster.UserNoDebug, "/metrics", http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.user+tt.path, func(t *testing.T) {
			cs := clientsetFor(t, c, tt.user)
			var got int
			err := cs.Discovery().RESTClient().Get().AbsPath(tt.path).Param("debug", "1").
				Do(context.Background()).StatusCode(&got).Error()
			if got != tt.want {
				t.Errorf("GET %s as %q: status %d, want %d (error: %v)", tt.path, tt.user, got, tt.want, err)
			}
		})
	}
}

// TestReproInitialEventsWatchBlocks shows kubernetes issue 131721 on the real
// API server, without the plugin: the slow informer's and the paced reader's
// initial-events watchers are blocked in sendWatchCacheEvent called from
// processInterval, both watch requests keep executing in APF (WatchInitialized
// was never signalled), the paced reader still progresses and the slow
// informer does not.
func TestReproInitialEventsWatchBlocks(t *testing.T) {
	r := sharedRepro(t)
	admin := clientsetFor(t, r.cluster, cluster.UserAdmin).Discovery().RESTClient()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	var lastSeen string
	err := wait.PollUntilContextCancel(ctx, 2*time.Second, true, func(ctx context.Context) (bool, error) {
		gs, err := goroutines(ctx, admin)
		if err != nil {
			return false, err
		}
		senders := probe.InitialEventsSenders(gs)
		writers := probe.BlockedIn(gs, probe.WriteDataFromHandler)
		reqs, err := probe.APFRequests(ctx, admin)
		if err != nil {
			return false, err
		}
		users := executingWatchUsers(reqs, r.pods.Namespace)
		lastSeen = fmt.Sprintf("%d goroutines in sendWatchCacheEvent from processInterval (%s); "+
			"%d HTTP/2 handlers in writeDataFromHandler; executing watches in %q by %v",
			len(senders), describe(senders), len(writers), r.pods.Namespace, users)
		return len(senders) == 2 && len(writers) >= 2 &&
			slices.Equal(users, []string{cluster.UserPacedReader, cluster.UserSlowInformer}), nil
	})
	if err != nil {
		t.Fatalf("reproduction not seen within 3m of starting: %v; last seen: %s", err, lastSeen)
	}
	t.Logf("after %v: %s", time.Since(r.clientsStarted).Round(time.Second), lastSeen)

	// The paced reader keeps receiving events; the slow informer stays at
	// the one event it read.
	before := r.pacedReader.Events()
	err = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(context.Context) (bool, error) {
		if n := r.slowInformer.Events(); n != 1 {
			return false, fmt.Errorf("%s received %d events, want exactly 1", r.slowInformer.Name(), n)
		}
		return r.pacedReader.Events() >= before+3, nil
	})
	if err != nil {
		t.Fatalf("paced reader at %d events (was %d), slow informer at %d: %v",
			r.pacedReader.Events(), before, r.slowInformer.Events(), err)
	}
	for _, w := range []interface {
		Name() string
		Err() error
	}{r.slowInformer, r.pacedReader, r.healthyClient} {
		if err := w.Err(); err != nil {
			t.Errorf("%s: %v", w.Name(), err)
		}
	}
	t.Logf("events: %s %d, %s %d (was %d), %s %d",
		r.slowInformer.Name(), r.slowInformer.Events(),
		r.pacedReader.Name(), r.pacedReader.Events(), before,
		r.healthyClient.Name(), r.healthyClient.Events())
}

// TestReproStuckWatcherAges waits, in real time, until the slow informer's
// sender goroutine has been blocked for a minute or more ("[select, 1
// minutes]" in a real dump), while the paced reader's, whose wait restarts
// with every event, shows no minutes.
func TestReproStuckWatcherAges(t *testing.T) {
	r := sharedRepro(t)
	admin := clientsetFor(t, r.cluster, cluster.UserAdmin).Discovery().RESTClient()
	// The runtime stamps a goroutine's wait start at the next GC after it
	// blocked, so the minutes can lag; allow a few minutes past the first.
	deadline := waitDeadline(r.clientsStarted, 5*time.Minute)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()

	var lastSeen string
	var stuck, moving []probe.Goroutine
	err := wait.PollUntilContextCancel(ctx, 5*time.Second, true, func(ctx context.Context) (bool, error) {
		gs, err := goroutines(ctx, admin)
		if err != nil {
			return false, err
		}
		senders := probe.InitialEventsSenders(gs)
		stuck, moving = nil, nil
		for _, g := range senders {
			if g.WaitMinutes >= 1 {
				stuck = append(stuck, g)
			} else {
				moving = append(moving, g)
			}
		}
		lastSeen = describe(senders)
		return len(stuck) == 1 && len(moving) == 1, nil
	})
	if err != nil {
		t.Fatalf("no sender blocked for a minute by %v after the clients started: %v; last seen: %s",
			deadline.Sub(r.clientsStarted), err, lastSeen)
	}
	if stuck[0].State != "select" {
		t.Errorf("stuck sender state = %q, want select", stuck[0].State)
	}
	if n := r.slowInformer.Events(); n != 1 {
		t.Errorf("%s received %d events, want 1", r.slowInformer.Name(), n)
	}
	t.Logf("after %v: %s", time.Since(r.clientsStarted).Round(time.Second), lastSeen)
}

// goroutines fetches and parses a debug=2 goroutine dump.
func goroutines(ctx context.Context, c rest.Interface) ([]probe.Goroutine, error) {
	dump, err := probe.GoroutineDump(ctx, c)
	if err != nil {
		return nil, err
	}
	return probe.ParseGoroutines(dump)
}

func describe(gs []probe.Goroutine) string {
	var s []string
	for _, g := range gs {
		s = append(s, g.String())
	}
	return strings.Join(s, "; ")
}

// executingWatchUsers returns, sorted, the users of the executing (seat
// holding) pod watch requests in namespace.
func executingWatchUsers(reqs []probe.APFRequest, namespace string) []string {
	var users []string
	for _, r := range reqs {
		if r.Executing() && r.Verb == "watch" && r.Resource == "pods" && r.Namespace == namespace {
			users = append(users, r.UserName)
		}
	}
	slices.Sort(users)
	return users
}

func clientsetFor(t *testing.T, c *cluster.Cluster, user string) *kubernetes.Clientset {
	t.Helper()
	cs, err := c.Clientset(user)
	if err != nil {
		t.Fatalf("clientset for %q: %v", user, err)
	}
	return cs
}
