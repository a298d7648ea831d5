package exporter

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/watch-doctor/watch-doctor/internal/live"
)

// Routes of watchdoctor_read_instances: a fixed set.
const (
	// RouteOwnAddress: each instance read at its own address.
	RouteOwnAddress = "own_address"
	// RouteLoadBalancer: the instances read through the kubeconfig host
	// (a load balancer), one connection per instance.
	RouteLoadBalancer = "load_balancer"
)

// coverage is how many of the cluster's live instances a look read, for
// an alert on an instance not read (a load balancer that never reached
// it, an address that does not answer). Immutable once published.
type coverage struct {
	// live is how many instances the cluster runs; 0 when unknown.
	live int
	// read is how many instances the look read, by route ("" before a
	// look found an instance; a look that then finds none reads 0 by the
	// last route).
	read  int
	route string
}

// coverageOf is the coverage of a look's run: live.Result.Coverage's
// counts (an instance whose samples reached several processes is not
// read), and the route of the instances read.
func coverageOf(res *live.Result) coverage {
	c := coverage{live: res.Coverage.Live, read: res.Coverage.Read, route: RouteOwnAddress}
	for _, ir := range res.Instances {
		if !ir.Instance.Pinned {
			c.route = RouteLoadBalancer
		}
	}
	if res.Coverage.ThroughBalancer {
		c.route = RouteLoadBalancer
	}
	return c
}

// collect writes the coverage's gauges for the cluster named apiserver
// (the kubeconfig or in-cluster host).
func (c coverage) collect(apiserver string, gauge func(*prometheus.Desc, float64, ...string)) {
	if c.live > 0 {
		gauge(descLiveInstances, float64(c.live), apiserver)
	}
	if c.route != "" {
		gauge(descReadInstances, float64(c.read), apiserver, c.route)
	}
}
