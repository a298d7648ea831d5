package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"

	"github.com/watch-doctor/watch-doctor/internal/live"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// The evidence names the pod when one holds the address, and who else it
// could be when several do.
func TestPodEvidence(t *testing.T) {
	t.Parallel()
	a := api.Pod{Namespace: "team-a", Name: "informer-1", IP: "10.0.0.7", Owner: "ReplicaSet/informer"}
	h1 := api.Pod{Namespace: "kube-system", Name: "agent-x", IP: "10.0.0.7", Owner: "DaemonSet/agent", HostNetwork: true}
	h2 := api.Pod{Namespace: "kube-system", Name: "bare", IP: "10.0.0.7", HostNetwork: true}
	for _, tc := range []struct {
		name string
		pods []api.Pod
		more bool
		want string
	}{
		{"none", nil, false, "no pod holds source address 10.0.0.7 now: a node or a host outside the cluster, or a pod since gone"},
		{"one", []api.Pod{a}, false, "pod team-a/informer-1 (ReplicaSet/informer) holds source address 10.0.0.7"},
		{"host network", []api.Pod{h1, h2}, false, "source address 10.0.0.7 is held by 2 pods (host network: they share their node's address): kube-system/agent-x (DaemonSet/agent), kube-system/bare; any of them may hold the watch"},
		{"more than listed", []api.Pod{h1, h2}, true, "source address 10.0.0.7 is held by more than 2 pods, among them kube-system/agent-x (DaemonSet/agent), kube-system/bare: any of them may hold the watch"},
	} {
		if got := podEvidence("10.0.0.7", tc.pods, tc.more); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// attachPods gives each finding with source addresses the pods the lookup
// found, with the evidence saying so, and the lookup's notes as warnings;
// a finding without addresses, and a run without a cluster, look nothing
// up.
func TestAttachPods(t *testing.T) {
	a := api.Pod{Namespace: "team-a", Name: "informer-1", IP: "10.0.0.7", Owner: "ReplicaSet/informer"}
	var asked []string
	lookupPods = func(_ context.Context, _ *rest.Config, ips []string) live.PodLookup {
		asked = append(asked, ips...)
		return live.PodLookup{Pods: map[string][]api.Pod{"10.0.0.7": {a}, "10.0.0.8": {}}, Notes: []string{"pods of source addresses: a note"}}
	}
	t.Cleanup(func() { lookupPods = live.LookupPods })
	report := func() *api.Report {
		return &api.Report{Findings: []api.Finding{
			{Client: &api.Client{User: "u", SourceIPs: []string{"10.0.0.7"}}},
			{Client: &api.Client{User: "v", SourceIPs: []string{"10.0.0.8", "10.0.0.9"}}},
			{Client: &api.Client{User: "w"}},
			{},
			{Client: &api.Client{Match: api.MatchAmbiguous}, Candidates: []api.Request{{User: "c1", SourceIPs: []string{"10.0.0.7"}}, {User: "c2"}}},
		}}
	}
	r := &Result{Report: report()}
	r.attachPods(context.Background(), Config{Live: live.Config{REST: &rest.Config{}, RequestTimeout: time.Second}})
	if diff := cmp.Diff([]string{"10.0.0.7", "10.0.0.8", "10.0.0.9", "10.0.0.7"}, asked); diff != "" {
		t.Errorf("addresses looked up (-want +got):\n%s", diff)
	}
	f := r.Report.Findings
	if diff := cmp.Diff([]api.Pod{a}, f[0].Client.Pods); diff != "" {
		t.Errorf("first finding's pods (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"pod team-a/informer-1 (ReplicaSet/informer) holds source address 10.0.0.7"}, f[0].Evidence); diff != "" {
		t.Errorf("first finding's evidence (-want +got):\n%s", diff)
	}
	// 10.0.0.8 was looked up and no pod holds it; 10.0.0.9 was not looked
	// up (the bound, a refusal): nothing is said of it.
	if len(f[1].Client.Pods) != 0 || len(f[1].Evidence) != 1 || !strings.HasPrefix(f[1].Evidence[0], "no pod holds source address 10.0.0.8") {
		t.Errorf("second finding: pods %v, evidence %q", f[1].Client.Pods, f[1].Evidence)
	}
	if len(f[2].Evidence)+len(f[3].Evidence) != 0 {
		t.Errorf("findings without addresses got evidence: %q %q", f[2].Evidence, f[3].Evidence)
	}
	// Each candidate gets its own pods.
	if diff := cmp.Diff([]api.Pod{a}, f[4].Candidates[0].Pods); diff != "" || len(f[4].Candidates[1].Pods) != 0 {
		t.Errorf("candidates' pods (-want +got):\n%s%v", diff, f[4].Candidates[1].Pods)
	}
	if diff := cmp.Diff([]string{"candidate c1: pod team-a/informer-1 (ReplicaSet/informer) holds source address 10.0.0.7"}, f[4].Evidence); diff != "" {
		t.Errorf("candidates' evidence (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"pods of source addresses: a note"}, r.Report.Warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}

	asked = nil
	for _, r := range []*Result{{Report: report()}, {}, {Report: &api.Report{Findings: []api.Finding{{Client: &api.Client{User: "w"}}}}}} {
		cfg := Config{Live: live.Config{REST: &rest.Config{}}}
		if r.Report != nil && len(r.Report.Findings) > 1 {
			cfg.Live.REST = nil // offline: the pods are those of now
		}
		r.attachPods(context.Background(), cfg)
	}
	if len(asked) != 0 {
		t.Errorf("looked up %v offline, without a report or without addresses", asked)
	}
}
