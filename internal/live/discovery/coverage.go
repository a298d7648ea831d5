package discovery

import (
	"fmt"
	"strings"

	"github.com/watch-doctor/watch-doctor/internal/live/model"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// Coverage says how many of the live instances the run read: each
// instance with a fetch that answered counts once (an instance is one
// process: through the balancer each connection kept reached a process of
// its own), unless a sample of it cannot be tied to one process (a
// balancer spreading one connection's requests, or a connection not
// shown to stay on one: live/pin.go): such a read is of no one
// instance. The instances not read are named: by their own address when
// pinned, or, through the balancer, as how many of the live ones, which
// cannot be told apart (no process names its lease).
func Coverage(results []model.InstanceResult, live liveInstances, bal *BalancerRun) api.InstanceCoverage {
	c := api.InstanceCoverage{Live: live.Count, Source: live.Source, LiveNames: live.Names}
	mixed := 0
	for _, r := range results {
		switch {
		case r.Failed():
			if r.Instance.Pinned {
				c.NotReached = append(c.NotReached, r.Instance.Name)
			}
		case r.Mixed():
			mixed++
		default:
			c.Read++
		}
	}
	if mixed > 0 {
		c.NotReached = append(c.NotReached, fmt.Sprintf("%d read through the load balancer whose samples cannot be tied to one process (a connection reached several, or was not shown to stay on one): of no one instance", mixed))
	}
	if bal != nil {
		c.ThroughBalancer, c.Connections = true, bal.Connections
	}
	missing := c.Live - c.Read - len(c.NotReached) - max(mixed-1, 0)
	if missing <= 0 {
		return c
	}
	if unread := unreadLeases(results, live); len(unread) == missing {
		// Each process read named its lease: the others are named too.
		if len(unread) <= maxListed {
			c.NotReached = append(c.NotReached, unread...)
		} else {
			c.NotReached = append(c.NotReached, fmt.Sprintf("%d of the %d live (%s)", missing, c.Live, listed(unread)))
		}
		return c
	}
	why := ""
	if bal != nil && bal.TimedOut {
		why = ": the time bound of the search through the load balancer was reached"
	}
	if bal != nil && c.Live > 2*bal.Connections {
		// Each process takes a connection: this many leases cannot all be
		// reached, and may not all be API server processes.
		why += fmt.Sprintf("; the %d identity leases far outnumber the %d processes reached after %d connection(s): they may not all be live API server processes", c.Live, c.Read+mixed, bal.Connections)
	}
	c.NotReached = append(c.NotReached, fmt.Sprintf("%d of the %d live (%s)%s", missing, c.Live, listed(live.Names), why))
	return c
}

// maxListed bounds the names a coverage line lists (issue 35: with 5,000
// identity leases the line was 115 KB).
const maxListed = 10

// listed joins names, the first maxListed of them when there are more.
func listed(names []string) string {
	if len(names) <= maxListed {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("the first %d: %s", maxListed, strings.Join(names[:maxListed], ", "))
}

// unreadLeases are the live leases no instance read holds, when every
// instance read through the kubeconfig host named its lease (identity.go);
// nil otherwise.
func unreadLeases(results []model.InstanceResult, live liveInstances) []string {
	if live.Source != api.LiveFromLeases {
		return nil
	}
	held := map[string]bool{}
	for _, r := range results {
		if r.Failed() || r.Mixed() {
			continue
		}
		if r.Instance.Pinned || r.Instance.Lease == "" {
			return nil
		}
		held[r.Instance.Lease] = true
	}
	var out []string
	for _, n := range live.Names {
		if !held[n] {
			out = append(out, n)
		}
	}
	return out
}
