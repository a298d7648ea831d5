package live

import (
	"fmt"

	"github.com/watch-doctor/watch-doctor/internal/live/model"
)

// spreadMixed marks every sample read through the kubeconfig host as
// mixed once one connection reached two processes (InstanceResult.Spread,
// pin.go): the load balancer then spreads requests (an HTTP, L7,
// balancer), and a sample whose identity probes all happened to reach
// one process may still hold another process's goroutine dump or APF
// dump between them (issue 35: through a balancer answering each request
// from the next of three processes, one instance of three counted read,
// its stuck watch critical with another process's client and seats). A
// sample mixed for another reason (a probe failed, the connection was
// dialed again) is mixed alone.
func spreadMixed(results []model.InstanceResult) {
	seen := ""
	for _, r := range results {
		if r.Instance.Pinned {
			continue
		}
		if r.Spread != "" && seen == "" {
			seen = r.Instance.Name
		}
	}
	if seen == "" {
		return
	}
	for i := range results {
		r := &results[i]
		if r.Instance.Pinned {
			continue
		}
		for j := range r.Samples {
			if r.Samples[j].Mixed == "" {
				r.Samples[j].Mixed = fmt.Sprintf("sample %d reached one API server process by its /metrics, but %s's samples through the same load balancer reached several: it spreads requests (an HTTP, L7, balancer), so this sample's goroutine dump and APF dump may come from different servers", j+1, seen)
			}
		}
	}
}
