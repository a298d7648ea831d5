package e2e

// kubectl watch-doctor serve with --trace-window on a real kube-apiserver:
// a client that stops reading during its initial events is decided stuck
// by the execution trace, and a slow one, initializing past the 30 s
// bound, progressing; read back from a real Prometheus, which fires
// WatchDoctorWatchStuck and resolves it once the client is killed.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/watch-doctor/watch-doctor/test/e2e/cluster"
	"github.com/watch-doctor/watch-doctor/test/e2e/workload"
)

const stuckAlert = "WatchDoctorWatchStuck"

func TestServeTraceDecidesStuckWithPrometheus(t *testing.T) {
	// Mostly waits (the one-minute block, the alert's for-duration): run
	// beside the other tests that wait (run.sh -parallel).
	t.Parallel()
	c := cluster.StartForTest(t, cluster.Options{})
	admin, err := c.LoaderClientset(500)
	if err != nil {
		t.Fatal(err)
	}
	pods := workload.PodsOptions{Namespace: "serve-trace-e2e", Count: 1000, AnnotationBytes: 20 * 1024, Workers: 16}
	if err := workload.CreatePods(context.Background(), admin, pods); err != nil {
		t.Fatalf("create pods: %v", err)
	}
	kubeconfig := serveAccountKubeconfig(t, c, admin)
	// Pinned: serve traces an instance only at its own address (this
	// cluster's EndpointSlices list none, so it would be read through the
	// kubeconfig host, and never traced).
	instance := strings.TrimPrefix(c.Server(), "https://")
	metricsAddr := startServe(t, kubeconfig, "--apiserver", instance, "--trace-window", "10s", "--trace-every", "15s", "--trace-budget", "64Mi")
	prom := startPrometheus(t, metricsAddr)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	startWatcher := func(user string, b workload.Behaviour, interval time.Duration) *workload.Watcher {
		return startInitialEventsWatcher(ctx, t, c, pods.Namespace, user, b, interval)
	}
	// Stuck, and slow: one event per 250 ms, so its 1,000 initial events
	// take over 4 minutes, well past the bound while it is traced.
	stuck := startWatcher(cluster.UserSlowInformer, workload.StopAfterFirst, 0)
	slow := startWatcher(cluster.UserPacedReader, workload.Paced, 250*time.Millisecond)
	started := time.Now()

	one := func(ctx context.Context, q string) (float64, bool) {
		vs, err := prom.query(ctx, q)
		if err != nil || len(vs) != 1 {
			return 0, false
		}
		return vs[0], true
	}
	type view struct{ stuck, progressing, undecided, slowAge float64 }
	read := func(ctx context.Context) (v view, ok bool) {
		var oks [4]bool
		v.stuck, oks[0] = one(ctx, `sum(watchdoctor_watches_by_state{state="stuck"})`)
		v.progressing, oks[1] = one(ctx, `sum(watchdoctor_watches_by_state{state="progressing"})`)
		v.undecided, oks[2] = one(ctx, `sum(watchdoctor_watches_by_state{state="undecided"})`)
		v.slowAge, oks[3] = one(ctx, fmt.Sprintf(`max(watchdoctor_user_oldest_initializing_age_seconds{user=%q})`, cluster.UserPacedReader))
		return v, oks[0] && oks[1] && oks[2] && oks[3]
	}
	var last view
	poll := func(what string, limit time.Duration, until func(view) bool) {
		t.Helper()
		err := wait.PollUntilContextTimeout(context.Background(), 2*time.Second, limit, true, func(ctx context.Context) (bool, error) {
			v, ok := read(ctx)
			if ok && v != last {
				t.Logf("after %s: stuck %g, progressing %g, undecided %g; slow client initializing for %.0f s", time.Since(started).Round(time.Second), v.stuck, v.progressing, v.undecided, v.slowAge)
				last = v
			}
			return ok && until(v), nil
		})
		if err != nil {
			t.Fatalf("%s: not within %s: %v; last seen %+v", what, limit, err, last)
		}
	}
	// The trace decides: one stuck, and the slow one (past the bound, so
	// the look alone left it undecided) progressing.
	poll("the trace decides one stuck, the slow one progressing", 3*time.Minute, func(v view) bool {
		return v.stuck == 1 && v.progressing >= 1 && v.undecided == 0 && v.slowAge > 30
	})
	decidedAt := time.Since(started)
	window, _ := one(context.Background(), `max(watchdoctor_trace_window_seconds)`)
	bytes, _ := one(context.Background(), `sum(watchdoctor_trace_bytes_total)`)
	pause, _ := one(context.Background(), `max(watchdoctor_last_trace_server_pause_seconds)`)
	t.Logf("decided after %s: trace window %.1f s, %.1f MiB of trace read so far, the traced look's stop-the-world %.3f ms", decidedAt.Round(time.Second), window, bytes/(1<<20), pause*1000)
	if window < 2 || bytes <= 0 {
		t.Errorf("trace window %g s, bytes %g: want the trace's cost exported", window, bytes)
	}
	errs, _ := prom.query(context.Background(), `watchdoctor_look_errors_total{kind=~"trace_.*"}`)
	for _, v := range errs {
		if v > 0 {
			t.Errorf("trace errors counted: %v", errs)
		}
	}

	// The alert fires (for: 1m) for the instance, naming the stuck user
	// among the candidates.
	err = wait.PollUntilContextTimeout(context.Background(), 2*time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		as, err := prom.alerts(ctx)
		if err != nil {
			return false, nil
		}
		for _, a := range as {
			if a.Labels["alertname"] == stuckAlert && a.State == "firing" {
				t.Logf("%s firing after %s: %s", stuckAlert, time.Since(started).Round(time.Second), a.Annotations["description"])
				if a.Labels["apiserver"] == "" || !containsAll(a.Annotations["description"], cluster.UserSlowInformer, a.Labels["apiserver"]) {
					t.Errorf("alert %v: want the instance and the stuck user named", a)
				}
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("%s never fired: %v; last seen %+v", stuckAlert, err, last)
	}
	if slow.Events() >= int64(pods.Count) {
		t.Fatalf("the slow client finished its initial events (%d events) before the check: make it slower", slow.Events())
	}

	// The stuck client is killed: no watch is stuck, the alert resolves,
	// and the next trace finds the slow one still progressing.
	stuck.Stop()
	killedAt := time.Now()
	err = wait.PollUntilContextTimeout(context.Background(), 2*time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		as, err := prom.alerts(ctx)
		if err != nil {
			return false, nil
		}
		for _, a := range as {
			if a.Labels["alertname"] == stuckAlert {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("%s did not resolve after the client was killed: %v", stuckAlert, err)
	}
	t.Logf("%s resolved %s after the client was killed", stuckAlert, time.Since(killedAt).Round(time.Second))
	poll("a new trace decides the slow one progressing, none stuck", 2*time.Minute, func(v view) bool {
		return v.stuck == 0 && v.progressing >= 1 && v.undecided == 0 && v.slowAge > 30
	})
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
