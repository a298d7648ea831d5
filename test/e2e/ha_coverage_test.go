package e2e

// An instance the plugin cannot reach: the run says so and is incomplete.

import (
	"slices"
	"strings"
	"testing"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/test/e2e/cluster"
)

// TestHAOneInstanceUnreachable: the TCP balancer stops sending new
// connections to apiserver-3, which runs on and keeps renewing its
// identity lease. From the client network the plugin reads the other two
// through the balancer and says 2 of 3, naming apiserver-3 (the lease no
// process it read holds). With --fail-on none the incomplete run exits 2;
// with the default --fail-on the critical findings on the other two win
// (exit 1), and the report still says 2 of 3.
func TestHAOneInstanceUnreachable(t *testing.T) {
	h := sharedHA(t)
	h.waitStuck(t)
	cn := clientNetwork(t)
	lb := h.cluster.LoadBalancer()
	gone := h.cluster.Instances()[2]
	if err := lb.SetDown(gone.Address, true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := lb.SetDown(gone.Address, false); err != nil {
			t.Error(err)
		}
	})
	in := pluginRun{kubeconfig: h.cluster.Kubeconfig(cluster.UserWatchDoctor), user: cluster.UserWatchDoctor, in: cn}
	for _, tc := range []struct {
		failOn string
		exit   int
	}{{"none", 2}, {"", 1}} {
		args := []string{"diagnose", "--samples", "1", "-o", "json"}
		what := "default --fail-on"
		if tc.failOn != "" {
			args = append(args, "--fail-on", tc.failOn)
			what = "--fail-on " + tc.failOn
		}
		res := runPluginWith(t, in, args...)
		rep := decode(t, res)
		c := rep.Instances
		if res.ExitCode != tc.exit {
			t.Errorf("%s with %s unreachable: exit %d, want %d\nstderr:\n%s", what, gone.Name, res.ExitCode, tc.exit, res.Stderr)
		}
		if c == nil || c.Read != 2 || c.Live != 3 || c.Source != api.LiveFromLeases || !c.ThroughBalancer || !slices.Equal(c.NotReached, []string{gone.Hostname}) {
			t.Errorf("%s: instances %+v, want 2 of 3 (identity leases) through the balancer, %s not reached", what, c, gone.Hostname)
			continue
		}
		if !strings.Contains(c.Text(), "2 of 3 instances read") {
			t.Errorf("%s: %q does not say 2 of 3", what, c.Text())
		}
		t.Logf("%s, %s unreachable: exit %d; %s", what, gone.Name, res.ExitCode, c.Text())
		p := h.placeByLease(t, rep)
		for _, f := range rep.Findings {
			if f.Client != nil && f.Client.User == h.stuckUser(gone) {
				t.Errorf("%s's watch on the unreachable %s reported on %s", f.Client.User, gone.Name, f.APIServer)
			}
		}
		for _, in := range h.cluster.Instances()[:2] {
			if !slices.ContainsFunc(rep.Findings, func(f api.Finding) bool {
				return f.Type == api.StuckInitialEvents && f.Client != nil && f.Client.User == h.stuckUser(in) && p.of[f.APIServer] == in
			}) {
				t.Errorf("%s: %s's stuck watch not reported on %s:\n%+v", what, h.stuckUser(in), in.Name, rep.Findings)
			}
		}
	}
}
