package e2e

// The HA cluster read from a client network that reaches only the load
// balancer, as from outside a managed cluster's network: the instances'
// own addresses do not answer, and the plugin reads every instance through
// the kubeconfig host, one connection each.

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/test/e2e/cluster"
)

// mixedNote matches the plugin's note on a sample whose fetches reached two
// processes.
var mixedNote = regexp.MustCompile(`sample (\d+) reached different API server processes \(process_start_time_seconds ([0-9.]+), then ([0-9.]+) (after GET \S+|at the end of the sample)\)`)

// l7Note matches the plugin's note on a sample whose /metrics, over the
// connection kept for one process, came from another (an HTTP balancer).
var l7Note = regexp.MustCompile(`sample (\d+): /metrics came from process_start_time_seconds [0-9.]+, not [0-9.]+, the process this connection was kept for, over the same connection: the load balancer spreads one connection's requests`)

// clientNetwork starts a client network that reaches only the load
// balancer's address, closed when the test ends.
func clientNetwork(t *testing.T) *cluster.ClientNetwork {
	t.Helper()
	cn, err := cluster.StartClientNetwork(cluster.LBAddress)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cn.Close(); err != nil {
			t.Error(err)
		}
	})
	return cn
}

// lbRun is diagnose, and collect then analyze, of the HA cluster from the
// client network through the TCP balancer.
type lbRun struct {
	diagnose, collect, analyze pluginResult
	drep, arep                 report
	bundle                     string
	manifest                   manifest
	// starts are the instances' process start times while it ran.
	starts map[*cluster.Instance]float64
}

// runThroughBalancer runs diagnose with diagArgs, then collect with
// collectArgs into a new bundle and analyze of it, each -o json where it
// prints a report.
func (h *haEnv) runThroughBalancer(t *testing.T, cn *cluster.ClientNetwork, diagArgs, collectArgs []string) lbRun {
	t.Helper()
	in := pluginRun{kubeconfig: h.cluster.Kubeconfig(cluster.UserWatchDoctor), user: cluster.UserWatchDoctor, in: cn}
	r := lbRun{starts: h.startTimes(t), bundle: filepath.Join(t.TempDir(), "bundle")}
	r.diagnose = runPluginWith(t, in, append([]string{"diagnose", "-o", "json"}, diagArgs...)...)
	r.drep = decode(t, r.diagnose)
	r.collect = runPluginWith(t, in, append([]string{"collect", "-d", r.bundle}, collectArgs...)...)
	r.manifest = readManifest(t, r.bundle)
	r.analyze = runPlugin(t, h.cluster, cluster.UserWatchDoctor, "analyze", r.bundle, "-o", "json")
	r.arep = decode(t, r.analyze)
	return r
}

// checkFallback: the report says it fell back to the load balancer lb and
// read each of the three instances through it, on a connection of its own
// (each server noted "not pinned" when live: analyze of a bundle does not
// note it, the manifest records it).
func checkFallback(t *testing.T, what string, rep report, lb string, live bool) {
	t.Helper()
	all := strings.Join(rep.Warnings, "\n")
	if !strings.Contains(all, "none of the 3 API server instances is reachable directly") || !strings.Contains(all, "reading through the kubeconfig host "+lb) {
		t.Errorf("%s: the report does not say it fell back to the load balancer %s:\n%s", what, lb, all)
	}
	if len(rep.APIServers) != 3 {
		t.Errorf("%s: apiservers = %+v, want the three instances, each through the load balancer %s", what, rep.APIServers, lb)
	}
	for _, a := range rep.APIServers {
		if !strings.HasPrefix(a.Name, lb) || live && !slices.ContainsFunc(a.Notes, func(n string) bool { return strings.Contains(n, "not pinned") }) {
			t.Errorf("%s: apiserver %q (notes %q), want one through %s, not pinned", what, a.Name, a.Notes, lb)
		}
	}
}

// checkBalancerRun checks diagnose, collect and analyze of one lbRun: 3 of
// 3 instances each, and every stuck watch with one finding of types on
// the instance its client connected to: by the lease each process names
// (diagnose) and by the start time of each process (the bundle).
func (h *haEnv) checkBalancerRun(t *testing.T, r lbRun, types ...api.FindingType) {
	t.Helper()
	lb := h.cluster.LoadBalancer().Address()
	checkFallback(t, "diagnose", r.drep, lb, true)
	h.checkThreeOfThree(t, "diagnose", r.drep.Instances, true)
	t.Logf("diagnose through the TCP balancer: exit %d; %s", r.diagnose.ExitCode, r.drep.Instances.Text())
	t.Logf("diagnose: stuck watches:\n%s", h.checkStuckPlaced(t, r.drep, h.placeByLease(t, r.drep), types...))

	if r.manifest.Coverage == nil || len(r.manifest.Instances) != 3 {
		t.Errorf("collect: %d instances, coverage %+v, want 3 of 3", len(r.manifest.Instances), r.manifest.Coverage)
	} else {
		h.checkThreeOfThree(t, "collect", r.manifest.Coverage, true)
		t.Logf("collect through the TCP balancer: exit %d; %s", r.collect.ExitCode, r.manifest.Coverage.Text())
	}
	for _, mi := range r.manifest.Instances {
		if mi.Pinned || !strings.HasPrefix(mi.Name, lb) {
			t.Errorf("collect: instance %q pinned %v, want one through %s, not pinned", mi.Name, mi.Pinned, lb)
		}
	}
	checkFallback(t, "analyze", r.arep, lb, false)
	h.checkThreeOfThree(t, "analyze", r.arep.Instances, true)
	p := h.placeByStart(t, r.manifest, r.starts)
	t.Logf("analyze of the bundle: exit %d; %s; stuck watches:\n%s", r.analyze.ExitCode, r.arep.Instances.Text(), h.checkStuckPlaced(t, r.arep, p, types...))
	if a, b := findingKeys(r.drep), findingKeys(r.arep); a == "" || b == "" {
		t.Errorf("no findings: diagnose %q, analyze %q", a, b)
	}
	for _, rep := range []report{r.drep, r.arep} {
		if m := mixedNote.FindString(notes(rep)); m != "" {
			t.Errorf("through the TCP balancer (one connection, one process): %q", m)
		}
		if m := l7Note.FindString(notes(rep)); m != "" {
			t.Errorf("through the TCP balancer (one connection, one process): %q", m)
		}
	}
}

// TestHAFallsBackThroughTheLoadBalancer: from a client network that reaches
// only the load balancer (the instances' own addresses are unreachable,
// as from outside a managed cluster's network), the plugin falls back to
// the kubeconfig host and says so. Through the TCP balancer, which keeps a
// connection on one instance, diagnose, and collect then analyze, open
// connections until they have reached every live instance (3 of 3), read
// each over its own connection, and report each stuck watch on the one
// instance that holds it; nothing is mixed. Through an HTTP-level balancer
// that spreads one connection's requests, the plugin says so on the
// samples, and the run is incomplete.
func TestHAFallsBackThroughTheLoadBalancer(t *testing.T) {
	h := sharedHA(t)
	h.waitStuck(t)
	cn := clientNetwork(t)

	r := h.runThroughBalancer(t, cn, []string{"--samples", "1"}, []string{"--samples", "1"})
	if r.diagnose.ExitCode != 1 || r.analyze.ExitCode != 1 || r.collect.ExitCode != 0 {
		t.Errorf("through the TCP balancer: diagnose exit %d, collect %d, analyze %d; want 1, 0, 1 (the stuck watches)\ndiagnose stderr:\n%s\ncollect stderr:\n%s",
			r.diagnose.ExitCode, r.collect.ExitCode, r.analyze.ExitCode, r.diagnose.Stderr, r.collect.Stderr)
	}
	h.checkBalancerRun(t, r, api.StuckInitialEvents)
	t.Logf("diagnose through the TCP balancer, warnings:\n%s", strings.Join(r.drep.Warnings, "\n"))

	// The HTTP balancer: each request to the next instance, whatever the
	// connection; the samples say so.
	hb, err := h.cluster.StartHTTPBalancer(cluster.LBAddress + ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer hb.Close()
	kc := filepath.Join(t.TempDir(), "kubeconfig-http-lb")
	if err := h.cluster.WriteKubeconfig(kc, cluster.UserWatchDoctor, "https://"+hb.Address()); err != nil {
		t.Fatal(err)
	}
	// --fail-on none: the findings read there are critical, and the exit
	// code checked is the incomplete run's.
	res := runPluginWith(t, pluginRun{kubeconfig: kc, user: cluster.UserWatchDoctor, in: cn}, "diagnose", "--samples", "1", "--fail-on", "none", "-o", "json")
	rep := decode(t, res)
	// Over an instance's own connection, its /metrics came from another
	// process than the search found there (l7Note), or the sample's
	// fetches did (mixedNote): which depends on how the round robin falls.
	m := l7Note.FindString(notes(rep))
	if m == "" {
		m = mixedNote.FindString(notes(rep))
	}
	if m == "" {
		t.Fatalf("no note that one connection's requests reached different processes (exit %d):\n%s", res.ExitCode, notes(rep))
	}
	t.Logf("through the HTTP balancer (exit %d), the plugin noted: %s; %s", res.ExitCode, m, rep.Instances.Text())
	// A sample of several processes is of no one instance: the run is
	// incomplete, never an all-clear.
	if c := rep.Instances; res.ExitCode != 2 || c == nil || c.Read >= 3 || !strings.Contains(strings.Join(c.NotReached, "; "), "samples cannot be tied to one process") {
		t.Errorf("through the HTTP balancer: exit %d, instances %+v; want 2, fewer than 3 read, the mixed samples named\nstderr:\n%s", res.ExitCode, c, res.Stderr)
	}
}
