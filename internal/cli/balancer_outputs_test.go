package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/bundle"
	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// serverNames are the report's API servers' names, sorted.
func serverNames(r api.Report) []string {
	var out []string
	for _, a := range r.APIServers {
		out = append(out, a.Name)
	}
	slices.Sort(out)
	return out
}

// One context of a fleet behind a load balancer: its cluster's report
// reads 2 of 2 instances through the balancer, one server each, named as
// plain diagnose names them, and the table gives each cluster's "N of M".
func TestFleetReadsEveryInstanceThroughTheBalancer(t *testing.T) {
	t.Parallel()
	_, lbURL := balancedPair(t, fakeapiserver.RoundRobin(2))
	self := fakeapiserver.Start(t, golden.Fixture("t2"))
	kc := writeKubeconfig(t, map[string]string{"managed": lbURL, "self": self.URL})
	code, out, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--contexts", "managed,self", "--samples", "1", "-o", "json")
	if code != ExitFindings {
		t.Fatalf("exit %d, want %d (the fixture's stuck watches)\nstderr:\n%s", code, ExitFindings, errOut)
	}
	var fr api.FleetReport
	if err := json.Unmarshal([]byte(out), &fr); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(fr.Clusters) != 2 || fr.Clusters[0].Context != "managed" || fr.Clusters[0].Report == nil {
		t.Fatalf("clusters %+v\nstderr:\n%s", fr.Clusters, errOut)
	}
	r := *fr.Clusters[0].Report
	if c := r.Instances; c == nil || c.Read != 2 || c.Live != 2 || !c.ThroughBalancer || len(c.NotReached) != 0 {
		t.Errorf("managed: instances %+v, want 2 of 2 through the balancer", c)
	}
	host := strings.TrimPrefix(lbURL, "https://")
	want := []string{host + "#started-1764410000.00", host + "#started-1764410001.00"}
	if diff := cmp.Diff(want, serverNames(r)); diff != "" {
		t.Errorf("managed: servers (-want +got):\n%s", diff)
	}
	if len(r.Incomplete) != 0 || fr.Summary.Failed != 0 {
		t.Errorf("managed: incomplete %q, failed %d; want a complete read", r.Incomplete, fr.Summary.Failed)
	}
	_, table, _ := runLive(t, "diagnose", "--kubeconfig", kc, "--contexts", "managed,self", "--samples", "1")
	if line := "\n  instances: managed: 2 of 2 instances read (identity leases) through the load balancer after 2 connection(s)\n"; !strings.Contains(table, line) {
		t.Errorf("the fleet table lacks %q:\n%s", line, table)
	}
}

// collect through the balancer writes one directory per instance reached,
// named as diagnose names the instance, the coverage in manifest.json;
// analyze of the bundle reports the same coverage and the same servers.
func TestCollectThroughTheBalancerOneDirectoryPerInstance(t *testing.T) {
	t.Parallel()
	kc, lbURL := balancedPair(t, fakeapiserver.RoundRobin(2))
	host := strings.TrimPrefix(lbURL, "https://")
	names := []string{host + "#started-1764410000.00", host + "#started-1764410001.00"}
	dir := filepath.Join(t.TempDir(), "bundle")
	if code, _, errOut := runLive(t, "collect", "--kubeconfig", kc, "--samples", "1", "-d", dir); code != 0 {
		t.Fatalf("collect: exit %d\nstderr:\n%s", code, errOut)
	}
	b, err := os.ReadFile(filepath.Join(dir, bundle.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	var m api.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, in := range m.Instances {
		got = append(got, in.Name)
		if in.Pinned || len(in.Samples) != 1 {
			t.Errorf("%s: pinned %v, %d samples; want through the balancer, 1 sample", in.Name, in.Pinned, len(in.Samples))
		}
		if st, err := os.Stat(filepath.Join(dir, bundle.SafeName(in.Name), "sample-1")); err != nil || !st.IsDir() {
			t.Errorf("%s: no directory %s/sample-1: %v", in.Name, bundle.SafeName(in.Name), err)
		}
	}
	if diff := cmp.Diff(names, got); diff != "" {
		t.Errorf("manifest instances (-want +got):\n%s", diff)
	}
	want := api.InstanceCoverage{Read: 2, Live: 2, Source: api.LiveFromLeases, LiveNames: []string{"cp-a", "cp-b"}, ThroughBalancer: true, Connections: 2}
	if m.Coverage == nil {
		t.Fatal("manifest.json has no coverage")
	}
	if diff := cmp.Diff(want, *m.Coverage); diff != "" {
		t.Errorf("manifest coverage (-want +got):\n%s", diff)
	}
	code, out, errOut := runLive(t, "analyze", dir, "-o", "json")
	if code != ExitFindings {
		t.Fatalf("analyze: exit %d, want %d\nstderr:\n%s", code, ExitFindings, errOut)
	}
	r := apiReport(t, out)
	if r.Instances == nil {
		t.Fatal("analyze reports no coverage")
	}
	if diff := cmp.Diff(want, *r.Instances); diff != "" {
		t.Errorf("analyze coverage (-manifest +analyze):\n%s", diff)
	}
	if diff := cmp.Diff(names, serverNames(r)); diff != "" {
		t.Errorf("analyze servers (-want +got):\n%s", diff)
	}
}
