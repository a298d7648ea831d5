package live

import (
	"context"
	"fmt"
	"net/netip"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// podsRule grants the lookup of a client's pod by its source address
// (diagnose --audit-log alone): deploy/rbac-audit.yaml, not in Rules, as
// serve never needs it.
var podsRule = Rule{APIGroup: "", Resource: "pods", Verb: "list"}

// Bounds of the pod lookup: a report names at most MaxPodLookups source
// addresses' pods (one list each), and at most MaxPodsPerIP pods per
// address (a node's address is shared by every host-network pod on it;
// the list says "more" rather than reading them all).
const (
	MaxPodLookups = 50
	MaxPodsPerIP  = 5
)

// PodLookup is what LookupPods found: the pods per source address, and
// notes on what could not be looked up.
type PodLookup struct {
	// Pods are the pods holding each address looked up, at most
	// MaxPodsPerIP each; an address looked up that no pod holds has an
	// empty list, one not looked up (a refusal, the bound) no entry.
	Pods map[string][]api.Pod
	// More are the addresses held by more pods than listed.
	More map[string]bool
	// Notes say what was not looked up and why (a refusal names the
	// missing RBAC rule).
	Notes []string
}

// LookupPods lists, for each source address, the pods whose status.podIP
// is that address: a read-only list per address, cluster-wide, with the
// field selector status.podIP, no retry, its body bounded as every
// answer. A listed pod whose status does not hold the address is dropped
// and counted in a note: the server's filter is checked, not believed.
// Addresses that are not IPs are skipped; a refusal ends the lookup with
// a note.
func LookupPods(ctx context.Context, cfg *rest.Config, ips []string) PodLookup {
	out := PodLookup{Pods: map[string][]api.Pod{}, More: map[string]bool{}}
	var valid []string
	seen := map[string]bool{}
	for _, ip := range ips {
		a, err := netip.ParseAddr(ip)
		if err != nil || seen[a.String()] {
			continue
		}
		seen[a.String()] = true
		valid = append(valid, a.String())
	}
	sort.Strings(valid)
	if len(valid) > MaxPodLookups {
		out.Notes = append(out.Notes, fmt.Sprintf("pods of source addresses: looked up the first %d of %d addresses", MaxPodLookups, len(valid)))
		valid = valid[:MaxPodLookups]
	}
	if len(valid) == 0 {
		return out
	}
	c, err := coreClient(cfg)
	if err != nil {
		out.Notes = append(out.Notes, "pods of source addresses: "+err.Error())
		return out
	}
	dropped := 0
	for _, ip := range valid {
		list := &corev1.PodList{}
		err := c.Get().Resource("pods").
			VersionedParams(&metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("status.podIP", ip).String(), Limit: MaxPodsPerIP}, scheme.ParameterCodec).
			MaxRetries(0).
			Do(ctx).Into(list)
		if err != nil {
			out.Notes = append(out.Notes, "pods of source addresses: "+podListRefusal(ip, err))
			return out
		}
		out.Pods[ip] = []api.Pod{}
		held := 0
		for i := range list.Items {
			if !holds(&list.Items[i], ip) {
				dropped++
				continue
			}
			if held++; held <= MaxPodsPerIP {
				out.Pods[ip] = append(out.Pods[ip], podOf(&list.Items[i], ip))
			}
		}
		if list.Continue != "" || held > MaxPodsPerIP {
			out.More[ip] = true
		}
	}
	if dropped > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("pods of source addresses: the server listed %d pod(s) whose status.podIP and status.podIPs are not the address asked for (it did not apply the field selector): dropped, not named", dropped))
	}
	return out
}

// holds reports whether p's status gives it the address ip: its podIP or
// one of its podIPs, parsed (net/netip), not believed from the field
// selector the server was asked to apply.
func holds(p *corev1.Pod, ip string) bool {
	want, err := netip.ParseAddr(ip)
	if err != nil {
		return false
	}
	same := func(s string) bool {
		a, err := netip.ParseAddr(s)
		return err == nil && a.Unmap() == want.Unmap()
	}
	if same(p.Status.PodIP) {
		return true
	}
	for _, a := range p.Status.PodIPs {
		if same(a.IP) {
			return true
		}
	}
	return false
}

// coreClient is a REST client of the core v1 group alone (the typed
// clientset would link every group's client for one list).
func coreClient(cfg *rest.Config) (rest.Interface, error) {
	c := guardedConfig(cfg)
	c.APIPath = "/api"
	c.GroupVersion = &corev1.SchemeGroupVersion
	c.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("building a client: %w", err)
	}
	return rc, nil
}

// podOf is the report's pod: its controller as the owner.
func podOf(p *corev1.Pod, ip string) api.Pod {
	out := api.Pod{Namespace: p.Namespace, Name: p.Name, IP: ip, HostNetwork: p.Spec.HostNetwork}
	if o := metav1.GetControllerOf(p); o != nil {
		out.Owner = o.Kind + "/" + o.Name
	}
	return out
}

// podListRefusal says why the pods list of ip failed: a refusal names
// the rule.
func podListRefusal(ip string, err error) string {
	switch {
	case isForbiddenStatus(err):
		return fmt.Sprintf("forbidden: missing RBAC rule %s (cluster-wide; deploy/rbac-audit.yaml grants it); the findings name source addresses, not pods", podsRule)
	case apierrors.IsTooManyRequests(err):
		return fmt.Sprintf("listing the pods of %s: HTTP 429 Too Many Requests: %s", ip, apfThrottling)
	}
	if g := guardError(err); g != nil {
		err = g
	}
	return fmt.Sprintf("listing the pods of %s: %s", ip, strings.TrimSpace(err.Error()))
}
