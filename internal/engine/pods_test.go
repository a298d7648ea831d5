package engine

import (
	"testing"

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
