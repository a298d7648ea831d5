package e2e

// The HA cluster hardened as the CIS Kubernetes Benchmark recommends:
// --profiling=false on every instance, so /debug/pprof answers 404. It
// runs last of the HA tests: its instances keep the flag.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/test/e2e/cluster"
	"github.com/watch-doctor/watch-doctor/test/e2e/probe"
)

// stallBound is the plugin's internal/diagnosis StallBound: a watch
// initializing longer than this on every sample is a finding even without
// a goroutine dump.
const stallBound = 30 * time.Second

// TestHAWithoutProfiling: every instance is restarted with
// --profiling=false, and its stuck and healthy watches with it. Once each
// stuck watch has been initializing past the stall bound (its APF row,
// polled on its instance), diagnose, and collect then analyze, from the
// client network through the TCP balancer, read 3 of 3 instances and
// report each stuck watch on its own instance from the APF dumps and
// /metrics alone: StuckInitialEvents where the samples are the stall
// bound apart and the resource's watch events did not grow, otherwise
// UndecidedInitialEvents saying that profiling is disabled (with 15 s
// between the samples, undecided). No exit 0, and no --force advice
// anywhere.
func TestHAWithoutProfiling(t *testing.T) {
	h := sharedHA(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	began := time.Now()
	for _, in := range h.cluster.Instances() {
		if err := h.cluster.RestartInstanceWith(ctx, in, "--profiling=false"); err != nil {
			t.Fatalf("restart %s with --profiling=false: %v", in.Name, err)
		}
	}
	for _, in := range h.cluster.Instances() {
		if err := h.startClients(in); err != nil {
			t.Fatal(err)
		}
		if err := checkNoProfiling(ctx, h, in); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("the three instances restarted with --profiling=false (/debug/pprof answers 404) and their watches started again in %v", time.Since(began).Round(time.Millisecond))
	for _, in := range h.cluster.Instances() {
		age, err := waitInitializing(ctx, h, in, stallBound+5*time.Second)
		if err != nil {
			t.Fatalf("%s's watch on %s: %v", h.stuckUser(in), in.Name, err)
		}
		t.Logf("%s's watch on %s: initializing for %v (its APF row)", h.stuckUser(in), in.Name, age.Round(time.Second))
	}

	cn := clientNetwork(t)
	r := h.runThroughBalancer(t, cn, []string{"--interval", pluginInterval}, []string{"--interval", pluginInterval})
	for _, run := range []struct {
		what string
		res  pluginResult
	}{{"diagnose", r.diagnose}, {"collect", r.collect}, {"analyze", r.analyze}} {
		if strings.Contains(run.res.Stdout+run.res.Stderr, "--force") {
			t.Errorf("%s advises --force, though no profile endpoint exists:\nstdout:\n%s\nstderr:\n%s", run.what, run.res.Stdout, run.res.Stderr)
		}
	}
	if r.diagnose.ExitCode == 0 || r.analyze.ExitCode == 0 {
		t.Errorf("diagnose exit %d, analyze exit %d: want neither 0 (watches initializing past the stall bound)\ndiagnose stderr:\n%s", r.diagnose.ExitCode, r.analyze.ExitCode, r.diagnose.Stderr)
	}
	t.Logf("without profiling: diagnose exit %d, collect exit %d, analyze exit %d", r.diagnose.ExitCode, r.collect.ExitCode, r.analyze.ExitCode)
	h.checkBalancerRun(t, r, api.StuckInitialEvents, api.UndecidedInitialEvents)
	for _, rep := range []report{r.drep, r.arep} {
		for _, a := range rep.APIServers {
			if !strings.Contains(strings.Join(a.Notes, "\n"), "evidence: APF dump_requests and /metrics only") {
				t.Errorf("%s: no note that the evidence is the APF dumps and /metrics only: %q", a.Name, a.Notes)
			}
		}
	}
	for _, f := range append(r.drep.Findings, r.arep.Findings...) {
		if f.Type == api.UndecidedInitialEvents && f.UndecidedReason != api.UndecidedProfilingDisabled {
			t.Errorf("%s on %s: undecided because %q, want %q", f.Type, f.APIServer, f.UndecidedReason, api.UndecidedProfilingDisabled)
		}
		t.Logf("%s %s on %s (%s): %s; evidence %q", f.Type, f.Severity, f.APIServer, f.UndecidedReason, f.Message, f.Evidence)
	}
}

// checkNoProfiling: in answers 404 on /debug/pprof/.
func checkNoProfiling(ctx context.Context, h *haEnv, in *cluster.Instance) error {
	cs, err := h.instanceClientset(in, cluster.UserAdmin)
	if err != nil {
		return err
	}
	_, err = cs.Discovery().RESTClient().Get().AbsPath("/debug/pprof/").DoRaw(ctx)
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("%s: GET /debug/pprof/ answered %v, want 404 (--profiling=false)", in.Name, err)
	}
	return nil
}

// waitInitializing polls in's APF dump until the stuck watch on it is
// executing (initializing) for longer than age, and returns its age.
func waitInitializing(ctx context.Context, h *haEnv, in *cluster.Instance, age time.Duration) (time.Duration, error) {
	cs, err := h.instanceClientset(in, cluster.UserAdmin)
	if err != nil {
		return 0, err
	}
	user := h.stuckUser(in)
	var got time.Duration
	var lastErr error
	err = wait.PollUntilContextCancel(ctx, 2*time.Second, true, func(ctx context.Context) (bool, error) {
		reqs, err := probe.APFRequests(ctx, cs.Discovery().RESTClient())
		if err != nil {
			lastErr = err
			return false, nil
		}
		for _, r := range reqs {
			if r.UserName != user || r.Verb != "watch" || !r.Executing() {
				continue
			}
			at, err := time.Parse(time.RFC3339Nano, r.ArriveTime)
			if err != nil {
				return false, fmt.Errorf("dump_requests: %s's ArriveTime %q: %w", user, r.ArriveTime, err)
			}
			got = time.Since(at)
			return got > age, nil
		}
		lastErr = errors.New("no executing watch of " + user + " in dump_requests")
		return false, nil
	})
	if err != nil {
		return got, fmt.Errorf("not initializing for %v (last age %v, last error %v): %w", age, got, lastErr, err)
	}
	return got, nil
}
