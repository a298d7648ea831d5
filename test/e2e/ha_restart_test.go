package e2e

// An instance that dies while the plugin reads the HA cluster.

import (
	"strings"
	"testing"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/test/e2e/cluster"
)

// TestHAInstanceKilledBetweenSamples: apiserver-1 dies (SIGKILL) while the
// plugin waits for the second sample. apiserver-2 and apiserver-3 are still
// diagnosed, the report lists the dead instance's errors, and the exit code
// is 1: a critical finding (the stuck watches on apiserver-2 and -3) wins
// over an incomplete run (README, exit codes). apiserver-1 and its watches
// are started again afterwards.
func TestHAInstanceKilledBetweenSamples(t *testing.T) {
	h := sharedHA(t)
	h.waitStuck(t)
	victim := h.cluster.Instances()[0]
	var killed bool
	var killErr error
	res := runPluginWith(t, pluginRun{
		kubeconfig: h.cluster.Kubeconfig(cluster.UserWatchDoctor), user: cluster.UserWatchDoctor,
		onStderr: func(line string) {
			if !killed && strings.Contains(line, "waiting") && strings.Contains(line, "sample 2/2") {
				killed, killErr = true, h.cluster.KillInstance(victim)
			}
		},
	}, "diagnose", "--interval", pluginInterval, "-o", "json", "-v")
	if killed {
		t.Cleanup(func() { restartInstance(t, h, victim) })
	}
	if !killed || killErr != nil {
		t.Fatalf("killing %s between the samples: killed %v, error %v\nstderr:\n%s", victim.Name, killed, killErr, res.Stderr)
	}
	if res.ExitCode != 1 {
		t.Errorf("exit %d, want 1: the stuck watches on the live instances are critical\nstderr:\n%s", res.ExitCode, res.Stderr)
	}
	rep := decode(t, res)
	if len(rep.Errors) == 0 {
		t.Errorf("no error listed for the dead %s", victim.Address)
	}
	for _, e := range rep.Errors {
		if !strings.Contains(e, victim.Address) {
			t.Errorf("error does not name the dead instance %s: %q", victim.Address, e)
		}
	}
	samples := map[string]int{}
	for _, a := range rep.APIServers {
		samples[a.Name] = a.Samples
	}
	for _, in := range h.cluster.Instances()[1:] {
		if samples[in.Address] != 2 {
			t.Errorf("%s: %d samples, want 2 (apiservers: %v)", in.Address, samples[in.Address], samples)
		}
		stuck := 0
		for _, f := range rep.Findings {
			if f.Type == api.StuckInitialEvents && f.APIServer == in.Address && f.Client != nil && f.Client.User == h.stuckUser(in) {
				stuck++
			}
		}
		if stuck != 1 {
			t.Errorf("want %s's stuck watch on %s still diagnosed, findings:\n%+v", h.stuckUser(in), in.Address, rep.Findings)
		}
	}
	t.Logf("errors: %q; %s", rep.Errors, rep.Instances.Text())
}
