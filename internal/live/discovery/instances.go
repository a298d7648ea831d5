// package live reads what the diagnosis needs straight from a cluster's
// API servers, each instance separately: goroutines and APF state are per
// process, so mixing two servers' data gives nonsense. It only reads:
// every request is a GET (or a LIST of endpointslices or leases, and of
// pods by status.podIP for LookupPods).
package discovery

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strconv"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/watch-doctor/watch-doctor/internal/live/model"
)

// Discovery says how the instances were found.
type Discovery struct {
	Instances []model.Instance
	Notes     []string
	// Live is how many instances the cluster runs (countLive).
	Live liveInstances
}

// kubernetesServiceLabel selects the EndpointSlices of default/kubernetes
// (the API servers register themselves there; k8s.io/kubernetes
// pkg/controlplane/reconcilers).
const kubernetesServiceLabel = discoveryv1.LabelServiceName + "=kubernetes"

// Discover lists the API server instances from the default/kubernetes
// EndpointSlices, or takes explicit HOST:PORT addresses. It does not contact the
// instances; see probe.
func Discover(ctx context.Context, cfg *rest.Config, explicit []string) (*Discovery, error) {
	d := &Discovery{}
	if len(explicit) > 0 {
		for _, addr := range explicit {
			if _, _, err := net.SplitHostPort(addr); err != nil {
				return nil, fmt.Errorf("invalid API server address %q: want HOST:PORT: %w", addr, err)
			}
			d.Instances = append(d.Instances, model.Instance{Name: addr, Address: addr, Pinned: true})
		}
		return d, nil
	}
	list, err := listAPIServers(ctx, model.GuardedConfig(cfg))
	if err != nil {
		if g := discoveryGuardError(err); g != nil {
			return nil, g
		}
		var st interface{ Status() metav1.Status }
		if !errors.As(err, &st) {
			// No answer at all (refused, timed out, no TLS): the
			// kubeconfig host, the only fallback, would not answer either.
			if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
				err = fmt.Errorf("no answer within the request timeout: %w", err)
			}
			return nil, &UnreachableError{Host: HostOf(cfg.Host), Err: err}
		}
		d.Notes = append(d.Notes, fmt.Sprintf("cannot list the API server instances (default/kubernetes EndpointSlices): %s; reading through the kubeconfig host %s instead", listRefusal(err), HostOf(cfg.Host)))
		d.Instances = []model.Instance{fallbackInstance(cfg)}
		return d, nil
	}
	d.addEndpoints(list.Items)
	if len(d.Instances) == 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("the default/kubernetes EndpointSlices list no ready API server; reading through the kubeconfig host %s instead", HostOf(cfg.Host)))
		d.Instances = []model.Instance{fallbackInstance(cfg)}
	}
	sort.Slice(d.Instances, func(i, j int) bool { return d.Instances[i].Name < d.Instances[j].Name })
	return d, nil
}

// addEndpoints adds the ready addresses of the EndpointSlices, each once,
// at the slices' https port (or their only one), noting the not-ready.
func (d *Discovery) addEndpoints(items []discoveryv1.EndpointSlice) {
	seen := map[string]bool{}
	for _, es := range items {
		port := int32(0)
		for _, p := range es.Ports {
			if p.Port == nil {
				continue
			}
			if port == 0 || (p.Name != nil && *p.Name == "https") {
				port = *p.Port
			}
		}
		if port == 0 {
			continue
		}
		for _, ep := range es.Endpoints {
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				d.Notes = append(d.Notes, fmt.Sprintf("skipped not-ready endpoint %v", ep.Addresses))
				continue
			}
			for _, a := range ep.Addresses {
				addr := net.JoinHostPort(a, strconv.Itoa(int(port)))
				if !seen[addr] {
					seen[addr] = true
					d.Instances = append(d.Instances, model.Instance{Name: addr, Address: addr, Pinned: true})
				}
			}
		}
	}
}

func fallbackInstance(cfg *rest.Config) model.Instance {
	return model.Instance{Name: HostOf(cfg.Host), Pinned: false}
}

// UnreachableError is a kubeconfig host that did not answer the
// discovery request.
type UnreachableError struct {
	Host string
	Err  error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("the API server %s %s listing the default/kubernetes EndpointSlices: %v", e.Host, failureOf(e.Err), e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

func isForbiddenStatus(err error) bool {
	var se interface{ Status() metav1.Status }
	if errors.As(err, &se) {
		return se.Status().Code == 403
	}
	return false
}

// HostOf returns host:port of a kubeconfig server URL.
func HostOf(server string) string {
	u, err := url.Parse(server)
	if err != nil || u.Host == "" {
		return server
	}
	return u.Host
}
