package live

import (
	"fmt"
	"strings"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// coverage says how many of the live instances the run read: each
// instance with a fetch that answered counts once (an instance is one
// process: through the balancer each connection kept reached a process of
// its own). The instances not read are named: by their own address when
// pinned, or, through the balancer, as how many of the live ones, which
// cannot be told apart (no process names its lease).
func coverage(results []InstanceResult, live liveInstances, bal *balancerRun) api.InstanceCoverage {
	c := api.InstanceCoverage{Live: live.Count, Source: live.Source, LiveNames: live.Names}
	for _, r := range results {
		if !r.Failed() {
			c.Read++
			continue
		}
		if r.Instance.Pinned {
			c.NotReached = append(c.NotReached, r.Instance.Name)
		}
	}
	if bal != nil {
		c.ThroughBalancer, c.Connections = true, bal.Connections
	}
	missing := c.Live - c.Read - len(c.NotReached)
	if missing <= 0 {
		return c
	}
	why := ""
	if bal != nil && bal.TimedOut {
		why = ": the time bound of the search through the load balancer was reached"
	}
	c.NotReached = append(c.NotReached, fmt.Sprintf("%d of the %d live (%s)%s", missing, c.Live, strings.Join(live.Names, ", "), why))
	return c
}
