package e2e

// The HA cluster read on each instance's own address (discovered from the
// default/kubernetes EndpointSlices), with profiling on.

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/test/e2e/cluster"
)

// haRuns is one diagnose and one collect of the HA cluster through the load
// balancer's kubeconfig, read on the instances' own addresses, shared by
// the tests of this file.
var haRuns struct {
	once     sync.Once
	done     bool
	diagnose pluginResult
	report   report
	bundle   string
	// startTimes are the instances' process start times (from /proc)
	// while the plugin ran.
	startTimes map[*cluster.Instance]float64
}

func sharedHARuns(t *testing.T) *haEnv {
	t.Helper()
	h := sharedHA(t)
	h.waitStuck(t)
	haRuns.once.Do(func() {
		haRuns.startTimes = h.startTimes(t)
		haRuns.bundle = filepath.Join(suite.dir, "ha-bundle")
		col := runPlugin(t, h.cluster, cluster.UserWatchDoctor, "collect", "-d", haRuns.bundle, "--interval", pluginInterval)
		if col.ExitCode != 0 {
			t.Fatalf("collect through the load balancer: exit %d\nstderr:\n%s", col.ExitCode, col.Stderr)
		}
		haRuns.diagnose = runPlugin(t, h.cluster, cluster.UserWatchDoctor, "diagnose", "--interval", pluginInterval, "-o", "json")
		haRuns.report = decode(t, haRuns.diagnose)
		t.Logf("diagnose -o json through the load balancer:\n%s", haRuns.diagnose.Stdout)
		haRuns.done = true
	})
	if !haRuns.done {
		t.Fatal("the shared diagnose and collect of the HA cluster failed in an earlier test")
	}
	return h
}

// TestHADiagnoseReadsEveryInstanceOnItsAddress: through the load balancer's
// kubeconfig, the plugin discovers the three instances from the
// default/kubernetes EndpointSlices (filled by the lease reconciler) and
// reads each on its own address: every sample's process_start_time_seconds
// is that of the process bound to the address it names. Each instance
// has its own hostname, hence its own identity lease: 3 of 3 counted from
// the leases, and no warning at all.
func TestHADiagnoseReadsEveryInstanceOnItsAddress(t *testing.T) {
	h := sharedHARuns(t)
	want := h.addresses()
	got, err := h.cluster.EndpointAddresses(context.Background())
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("default/kubernetes EndpointSlices list %v (%v), want the three instances %v", got, err, want)
	}
	t.Logf("default/kubernetes EndpointSlices list %v", got)
	checkIdentityLeases(t, h)

	rep := haRuns.report
	var names []string
	for _, a := range rep.APIServers {
		names = append(names, a.Name)
		if a.Samples != 2 {
			t.Errorf("%s: %d samples, want 2", a.Name, a.Samples)
		}
		for _, n := range a.Notes {
			if strings.Contains(n, "not pinned") || strings.Contains(n, "different") {
				t.Errorf("%s: %q", a.Name, n)
			}
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Errorf("diagnose read %v, want each instance on its own address %v", names, want)
	}
	if len(rep.Errors) > 0 || len(rep.Warnings) > 0 {
		t.Errorf("diagnose errors %q, warnings %q; want none (each instance holds its own identity lease)", rep.Errors, rep.Warnings)
	}
	h.checkThreeOfThree(t, "diagnose", rep.Instances, false)
	t.Logf("diagnose: %s", rep.Instances.Text())

	m := readManifest(t, haRuns.bundle)
	p := h.placeByStart(t, m, haRuns.startTimes)
	var collected []string
	for _, in := range m.Instances {
		collected = append(collected, in.Name)
		if at := p.of[in.Name]; at == nil || !in.Pinned || in.Address != in.Name || at.Address != in.Name {
			t.Errorf("collect instance %q (address %q, pinned %v) read %s: want each instance pinned to its own address", in.Name, in.Address, in.Pinned, nameOf(at))
		}
		if len(in.Samples) != 2 {
			t.Errorf("%s: %d samples, want 2", in.Name, len(in.Samples))
		}
	}
	slices.Sort(collected)
	if !slices.Equal(collected, want) {
		t.Errorf("collect read %v, want %v", collected, want)
	}
}

// checkIdentityLeases: kube-system holds one identity lease per instance,
// labelled with the instance's hostname.
func checkIdentityLeases(t *testing.T, h *haEnv) {
	t.Helper()
	cs, err := h.cluster.Clientset(cluster.UserAdmin)
	if err != nil {
		t.Fatal(err)
	}
	list, err := cs.CoordinationV1().Leases(metav1.NamespaceSystem).List(context.Background(), metav1.ListOptions{LabelSelector: "apiserver.kubernetes.io/identity=kube-apiserver"})
	if err != nil {
		t.Fatal(err)
	}
	var hosts, leases []string
	for _, l := range list.Items {
		hosts = append(hosts, l.Labels["kubernetes.io/hostname"])
		leases = append(leases, l.Name)
	}
	slices.Sort(hosts)
	if !slices.Equal(hosts, h.hostnames()) {
		t.Errorf("identity leases %v of hostnames %v, want one per instance %v", leases, hosts, h.hostnames())
	}
	t.Logf("identity leases %v, hostnames %v", leases, hosts)
}

// TestHAStuckWatchesReportedOnTheirInstances: each instance's stuck watch
// is reported on that instance, with its client, and nowhere else; the
// healthy watches give no finding.
func TestHAStuckWatchesReportedOnTheirInstances(t *testing.T) {
	h := sharedHARuns(t)
	res, rep := haRuns.diagnose, haRuns.report
	if res.ExitCode != 1 {
		t.Errorf("exit %d, want 1 (critical findings)\nstderr:\n%s", res.ExitCode, res.Stderr)
	}
	t.Logf("stuck watches:\n%s", h.checkStuckPlaced(t, rep, h.placeByAddress(), api.StuckInitialEvents))
	for _, f := range rep.Findings {
		if f.Type == api.StuckInitialEvents && (f.BlockedMinutes == nil || *f.BlockedMinutes < 1) {
			t.Errorf("%s's stuck finding blocked %v minutes, want >= 1", f.APIServer, f.BlockedMinutes)
		}
	}
	// The healthy watches were real and are still streaming: each read
	// every pod's ADDED event.
	for _, in := range h.cluster.Instances() {
		w := h.clientsOf(in).healthy
		if w.Err() != nil || w.Events() < int64(h.pods.Count) {
			t.Errorf("healthy-client on %s: %d events (want >= %d), error %v", in.Name, w.Events(), h.pods.Count, w.Err())
		}
	}
}

// TestHACollectThenAnalyzeAgreesWithDiagnose: the bundle collect wrote of
// the three instances, analyzed offline, gives diagnose's findings.
func TestHACollectThenAnalyzeAgreesWithDiagnose(t *testing.T) {
	h := sharedHARuns(t)
	off := runPlugin(t, h.cluster, cluster.UserWatchDoctor, "analyze", haRuns.bundle, "-o", "json")
	if off.ExitCode != 1 {
		t.Fatalf("analyze exit %d, want 1\nstderr:\n%s", off.ExitCode, off.Stderr)
	}
	or := decode(t, off)
	if a, b := findingKeys(haRuns.report), findingKeys(or); a != b || a == "" {
		t.Errorf("analyze of the collected bundle disagrees with diagnose:\ndiagnose:\n%s\nanalyze:\n%s", a, b)
	}
	var names []string
	for _, a := range or.APIServers {
		names = append(names, a.Name)
	}
	slices.Sort(names)
	if want := h.addresses(); !slices.Equal(names, want) {
		t.Errorf("analyze of the bundle names servers %v, want %v", names, want)
	}
	h.checkThreeOfThree(t, "analyze", or.Instances, false)
}
