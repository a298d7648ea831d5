package live

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// LookupPods lists the pods of each distinct address once, skips what
// is not an address, bounds the pods per address (saying there are
// more), and stops at a refusal, naming the rule.
func TestLookupPods(t *testing.T) {
	t.Parallel()
	s := fakeapiserver.Start(t, golden.Fixture("t1"))
	s.Pods = []corev1.Pod{fakeapiserver.Pod("a", "p1", "10.0.0.1", "ReplicaSet/rs", false)}
	for i := range MaxPodsPerIP + 1 {
		s.Pods = append(s.Pods, fakeapiserver.Pod("kube-system", fmt.Sprintf("h%d", i), "10.0.0.2", "", true))
	}
	cfg := fakeapiserver.RESTConfig(t, s, fakeapiserver.TokenAdmin)
	l := LookupPods(context.Background(), cfg, []string{"10.0.0.1", "not-an-ip", "10.0.0.2", "10.0.0.1", "10.0.0.3"})
	if diff := cmp.Diff([]api.Pod{{Namespace: "a", Name: "p1", IP: "10.0.0.1", Owner: "ReplicaSet/rs"}}, l.Pods["10.0.0.1"]); diff != "" {
		t.Errorf("10.0.0.1 (-want +got):\n%s", diff)
	}
	if n := len(l.Pods["10.0.0.2"]); n != MaxPodsPerIP || !l.More["10.0.0.2"] {
		t.Errorf("10.0.0.2: %d pods, more %v: want %d and more", n, l.More["10.0.0.2"], MaxPodsPerIP)
	}
	if p, ok := l.Pods["10.0.0.3"]; !ok || len(p) != 0 {
		t.Errorf("10.0.0.3: %v, looked up %v: want looked up, no pod", p, ok)
	}
	lists := 0
	for _, r := range s.Requests() {
		if strings.HasPrefix(r, fakeapiserver.PodsPath) {
			lists++
		}
	}
	if lists != 3 || len(l.Notes) != 0 {
		t.Errorf("%d lists, notes %v: want one per distinct address, no note", lists, l.Notes)
	}

	s.ForbidPods = true
	l = LookupPods(context.Background(), cfg, []string{"10.0.0.1", "10.0.0.2"})
	if len(l.Pods) != 0 || len(l.Notes) != 1 || !strings.Contains(l.Notes[0], `missing RBAC rule apiGroups: [""], resources: ["pods"], verbs: ["list"]`) {
		t.Errorf("refused: pods %v, notes %v: want none and the rule named once", l.Pods, l.Notes)
	}
}

// More addresses than MaxPodLookups: the first are looked up, and a note
// says how many were not.
func TestLookupPodsBound(t *testing.T) {
	t.Parallel()
	s := fakeapiserver.Start(t, golden.Fixture("t1"))
	var ips []string
	for i := range MaxPodLookups + 3 {
		ips = append(ips, fmt.Sprintf("10.1.%d.%d", i/200, i%200))
	}
	l := LookupPods(context.Background(), fakeapiserver.RESTConfig(t, s, fakeapiserver.TokenAdmin), ips)
	want := fmt.Sprintf("looked up the first %d of %d addresses", MaxPodLookups, MaxPodLookups+3)
	if len(l.Pods) != MaxPodLookups || len(l.Notes) != 1 || !strings.Contains(l.Notes[0], want) {
		t.Errorf("%d looked up, notes %v: want %d and %q", len(l.Pods), l.Notes, MaxPodLookups, want)
	}
}

// A server that does not apply the status.podIP field selector lists
// every pod: the pods whose status does not hold the address asked for
// are dropped and counted in a note, never named (one holding it by
// status.podIPs alone is kept).
func TestLookupPodsChecksTheAddress(t *testing.T) {
	t.Parallel()
	s := fakeapiserver.Start(t, golden.Fixture("t1"))
	s.IgnorePodSelector = true
	dual := fakeapiserver.Pod("b", "dual", "10.0.0.9", "", false)
	dual.Status.PodIPs = []corev1.PodIP{{IP: "10.0.0.9"}, {IP: "fd00::2"}}
	s.Pods = []corev1.Pod{fakeapiserver.Pod("a", "p1", "10.0.0.1", "", false), fakeapiserver.Pod("a", "p2", "10.0.0.2", "", false), dual}
	l := LookupPods(context.Background(), fakeapiserver.RESTConfig(t, s, fakeapiserver.TokenAdmin), []string{"10.0.0.1", "fd00::2"})
	got := map[string][]string{}
	for ip, pods := range l.Pods {
		for _, p := range pods {
			got[ip] = append(got[ip], p.Namespace+"/"+p.Name)
		}
	}
	if diff := cmp.Diff(map[string][]string{"10.0.0.1": {"a/p1"}, "fd00::2": {"b/dual"}}, got); diff != "" {
		t.Errorf("pods per address (-want +got):\n%s", diff)
	}
	want := "pods of source addresses: the server listed 4 pod(s) whose status.podIP and status.podIPs are not the address asked for (it did not apply the field selector): dropped, not named"
	if diff := cmp.Diff([]string{want}, l.Notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
}
