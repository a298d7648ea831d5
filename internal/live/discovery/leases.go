package discovery

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/watch-doctor/watch-doctor/internal/live/model"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// identityLeaseSelector selects the identity Leases kube-apiserver keeps
// in kube-system, one per instance, renewed every 10 s for 3600 s by
// default (k8s.io/kubernetes pkg/controlplane/apiserver/server.go:54-73,
// 260-283 in v1.37.2: the lease is named after the server's APIServerID,
// its holder is that ID and a UUID of the process, and it is labelled
// with the instance's hostname).
const identityLeaseSelector = "apiserver.kubernetes.io/identity=kube-apiserver"

// identityLease is one instance's identity Lease.
type identityLease struct {
	// Name is the lease's name: the instance's APIServerID.
	Name string
	// Holder is the holderIdentity: the ID and a UUID of its process.
	Holder string
	// Hostname is the instance's hostname (its kubernetes.io/hostname
	// label), "" when not set.
	Hostname string
	// Renewed is the renewTime; Duration the leaseDurationSeconds.
	Renewed  time.Time
	Duration time.Duration
}

// label is how reports name the instance of a lease: its hostname, or its
// name.
func (l identityLease) label() string {
	if l.Hostname != "" {
		return l.Hostname
	}
	return l.Name
}

// live reports whether the lease was renewed within its duration at now.
func (l identityLease) live(now time.Time) bool {
	return !l.Renewed.IsZero() && l.Duration > 0 && !now.After(l.Renewed.Add(l.Duration))
}

// listIdentityLeases lists the identity Leases of kube-system once, no
// retry (see listAPIServers), through the scheme's codecs: no typed
// client is linked for one list.
func listIdentityLeases(ctx context.Context, cfg *rest.Config) ([]identityLease, error) {
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &coordinationv1.SchemeGroupVersion
	c.APIPath = "/apis"
	c.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("building a client: %w", err)
	}
	list := &coordinationv1.LeaseList{}
	err = rc.Get().
		Namespace(metav1.NamespaceSystem).Resource("leases").
		VersionedParams(&metav1.ListOptions{LabelSelector: identityLeaseSelector}, scheme.ParameterCodec).
		MaxRetries(0).
		Do(ctx).Into(list)
	if err != nil {
		return nil, err
	}
	var out []identityLease
	for _, l := range list.Items {
		il := identityLease{Name: l.Name, Hostname: l.Labels["kubernetes.io/hostname"]}
		if l.Spec.HolderIdentity != nil {
			il.Holder = *l.Spec.HolderIdentity
		}
		if l.Spec.RenewTime != nil {
			il.Renewed = l.Spec.RenewTime.Time
		}
		if l.Spec.LeaseDurationSeconds != nil {
			il.Duration = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
		}
		out = append(out, il)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].label() < out[j].label() })
	return out, nil
}

// liveInstances is what is known of the instances the cluster runs.
type liveInstances struct {
	// Count is how many are live; 0 when unknown.
	Count int
	// Source is api.LiveFromLeases or api.LiveFromEndpointSlices.
	Source string
	// Names name them: the leases' hostnames, or the endpoints' addresses.
	Names []string
	// byHash maps the apiserver_id_hash of each live lease's holder to
	// the lease's label (identity.go); nil without leases.
	byHash map[string]string
}

// liveLeases keeps the leases renewed within their duration at now; the
// others (an instance gone, its lease not yet collected) are said in a
// note each.
func liveLeases(leases []identityLease, now time.Time) (live []identityLease, notes []string) {
	for _, l := range leases {
		if l.live(now) {
			live = append(live, l)
			continue
		}
		notes = append(notes, fmt.Sprintf("identity lease %s (holder %s) was last renewed %s, more than its %s ago: that instance is not counted as live", l.label(), l.Holder, l.Renewed.UTC().Format(time.RFC3339), l.Duration))
	}
	return live, notes
}

// CountLive says how many instances the cluster runs: its live identity
// Leases, or the ready endpoints discovery found (endpoints, nil when it
// fell back to the kubeconfig host) when they are more. Either may count
// too few: a lease is named after its instance's hostname, so instances
// sharing one share a lease; an instance may run without the endpoint
// reconciler. A refused or failed list is said in a note, never an error:
// the run goes on.
func CountLive(ctx context.Context, cfg *rest.Config, endpoints []model.Instance, now time.Time) (liveInstances, []string) {
	var notes []string
	var li liveInstances
	leases, err := listIdentityLeases(ctx, model.GuardedConfig(cfg))
	if err == nil {
		var live []identityLease
		live, notes = liveLeases(leases, now)
		li = liveInstances{Count: len(live), Source: api.LiveFromLeases, byHash: map[string]string{}}
		for _, l := range live {
			li.Names = append(li.Names, l.label())
			li.byHash[LeaseHash(l.Name)] = l.label()
		}
	} else {
		notes = append(notes, fmt.Sprintf("cannot list the API server identity leases (kube-system, %s): %s; the instances are counted from the default/kubernetes EndpointSlices", identityLeaseSelector, leaseRefusal(err)))
	}
	if len(endpoints) <= li.Count {
		return li, notes
	}
	if li.Count > 0 {
		notes = append(notes, fmt.Sprintf("%d live API server identity lease(s) (%s) but %d ready endpoints of default/kubernetes: counting %d instances (instances sharing a hostname share a lease)", li.Count, strings.Join(li.Names, ", "), len(endpoints), len(endpoints)))
	}
	li = liveInstances{Count: len(endpoints), Source: api.LiveFromEndpointSlices, byHash: li.byHash}
	for _, e := range endpoints {
		li.Names = append(li.Names, e.Name)
	}
	return li, notes
}

// leaseRefusal phrases a failed list of the leases; a 403 names the
// missing rule.
func leaseRefusal(err error) string {
	if isForbiddenStatus(err) {
		return fmt.Sprintf("forbidden: missing RBAC rule %s in namespace %q", model.LeasesRule(), metav1.NamespaceSystem)
	}
	if g := discoveryGuardError(err); g != nil {
		return g.Error()
	}
	return listRefusal(err)
}
