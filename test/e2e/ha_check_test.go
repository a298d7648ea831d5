package e2e

// What the HA tests check of each report: which instance each server of
// the report read, and that every stuck watch is reported on the one
// instance its client connected to.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/test/e2e/cluster"
)

// manifest is the part of a collect bundle's manifest.json the tests read.
type manifest = api.Manifest

func readManifest(t *testing.T, dir string) manifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s/manifest.json: %v", dir, err)
	}
	return m
}

// placement maps each server name of a report to the instance it read,
// and says how that was known.
type placement struct {
	of  map[string]*cluster.Instance
	how string
}

// placeByAddress: a server read on an instance's own address is named
// after it.
func (h *haEnv) placeByAddress() placement {
	p := placement{of: map[string]*cluster.Instance{}, how: "its own address"}
	for _, in := range h.cluster.Instances() {
		p.of[in.Address] = in
	}
	return p
}

// leaseNote opens the note diagnose gives a server reached through the
// load balancer whose /metrics name its identity lease (internal/engine).
const leaseNote = "holds the identity lease (apiserver_id_hash) of "

// placeByLease: through the load balancer, diagnose notes the identity
// lease each process holds (its apiserver_id_hash), and each instance
// holds the lease of its own hostname.
func (h *haEnv) placeByLease(t *testing.T, rep report) placement {
	t.Helper()
	p := placement{of: map[string]*cluster.Instance{}, how: "the identity lease its /metrics name"}
	for _, a := range rep.APIServers {
		for _, n := range a.Notes {
			host, ok := strings.CutPrefix(n, leaseNote)
			if !ok {
				continue
			}
			i := slices.IndexFunc(h.cluster.Instances(), func(in *cluster.Instance) bool { return in.Hostname == host })
			if i < 0 {
				t.Errorf("%s holds the lease of %q, no instance's hostname (%v)", a.Name, host, h.hostnames())
				continue
			}
			p.of[a.Name] = h.cluster.Instances()[i]
		}
		if p.of[a.Name] == nil {
			t.Errorf("%s: no note names the lease it holds (notes %q)", a.Name, a.Notes)
		}
	}
	return p
}

// placeByStart: each instance of a collect bundle is the instance whose
// process started (from /proc) when every sample's
// process_start_time_seconds says.
func (h *haEnv) placeByStart(t *testing.T, m manifest, starts map[*cluster.Instance]float64) placement {
	t.Helper()
	p := placement{of: map[string]*cluster.Instance{}, how: "process_start_time_seconds = the start of its process in /proc"}
	for _, mi := range m.Instances {
		for i, s := range mi.Samples {
			for _, f := range s.Fetches {
				if f.Kind != api.FileMetrics {
					continue
				}
				var at *cluster.Instance
				for in, st := range starts {
					if f.Error == "" && sameStart(f.ProcessStartTime, st, 0.011) {
						at = in
					}
				}
				switch prev := p.of[mi.Name]; {
				case at == nil:
					t.Errorf("%s sample %d: process_start_time_seconds %.2f (error %q) is the start of no instance's process %v", mi.Name, i+1, f.ProcessStartTime, f.Error, starts)
				case prev != nil && prev != at:
					t.Errorf("%s sample %d: process_start_time_seconds %.2f is %s's, sample 1 was %s's", mi.Name, i+1, f.ProcessStartTime, at.Name, prev.Name)
				default:
					p.of[mi.Name] = at
				}
			}
		}
	}
	return p
}

// checkStuckPlaced checks that each stuck watch has exactly one finding of
// one of types, on the server that read the instance its client connected
// to; that every finding naming a client names a stuck one on its own
// instance; and that the healthy watches are in no finding. It returns a
// line per stuck watch for the log.
func (h *haEnv) checkStuckPlaced(t *testing.T, rep report, p placement, types ...api.FindingType) string {
	t.Helper()
	found := map[string]int{}
	var lines []string
	for _, f := range rep.Findings {
		if f.Client == nil {
			t.Logf("finding %s on %s names no client: %s", f.Type, f.APIServer, f.Message)
			continue
		}
		if f.Client.User == cluster.UserHealthyClient || slices.ContainsFunc(f.Candidates, func(r api.Request) bool { return r.User == cluster.UserHealthyClient }) {
			t.Errorf("healthy-client is in a finding: %s on %s: %s", f.Type, f.APIServer, f.Message)
		}
		want := h.instanceOf(f.Client.User)
		got := p.of[f.APIServer]
		switch {
		case want == nil:
			t.Errorf("finding %s on %s names %q, no stuck watch's user", f.Type, f.APIServer, f.Client.User)
			continue
		case got != want:
			t.Errorf("%s's watch (client connected to %s) reported on %s, which read %v (by %s)", f.Client.User, want.Name, f.APIServer, nameOf(got), p.how)
			continue
		}
		if !slices.Contains(types, f.Type) {
			t.Errorf("%s's watch on %s: %s, want one of %v: %s", f.Client.User, want.Name, f.Type, types, f.Message)
			continue
		}
		if f.Client.Namespace != h.pods.Namespace || f.Client.Resource != "pods" {
			t.Errorf("%s's finding names %s in %q, want pods in %s", f.Client.User, f.Client.Resource, f.Client.Namespace, h.pods.Namespace)
		}
		found[f.Client.User]++
		lines = append(lines, fmt.Sprintf("%s (%s): %s %s on %s = %s (by %s)", f.Client.User, f.Severity, f.Type, f.Phase, f.APIServer, want.Name, p.how))
	}
	for _, u := range stuckUsers {
		if found[u] != 1 {
			t.Errorf("%s's stuck watch on %s: %d findings, want exactly 1", u, h.instanceOf(u).Name, found[u])
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

func nameOf(in *cluster.Instance) string {
	if in == nil {
		return "no known instance"
	}
	return in.Name
}

// checkThreeOfThree checks the report's instance coverage: 3 of 3 live
// instances counted from their identity leases, one per hostname, read
// through the load balancer when through is set.
func (h *haEnv) checkThreeOfThree(t *testing.T, what string, c *api.InstanceCoverage, through bool) {
	t.Helper()
	if c == nil {
		t.Errorf("%s: no instances in the report", what)
		return
	}
	names := slices.Clone(c.LiveNames)
	slices.Sort(names)
	if c.Read != 3 || c.Live != 3 || c.Source != api.LiveFromLeases || !slices.Equal(names, h.hostnames()) || len(c.NotReached) != 0 || c.ThroughBalancer != through {
		t.Errorf("%s: instances %q (%+v), want 3 of 3 read, counted from the identity leases of %v, through the balancer %v", what, c.Text(), *c, h.hostnames(), through)
	}
}

// notes are a report's warnings and every server's notes.
func notes(rep report) string {
	all := slices.Clone(rep.Warnings)
	for _, a := range rep.APIServers {
		all = append(all, a.Notes...)
	}
	return strings.Join(all, "\n")
}
