package discovery

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/live/model"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

func TestCoverage(t *testing.T) {
	t.Parallel()
	read := func(name string, pinned bool) model.InstanceResult {
		return model.InstanceResult{Instance: model.Instance{Name: name, Pinned: pinned}, Samples: []api.Sample{{Fetches: []api.FetchInfo{{Kind: api.FileMetrics}}}}}
	}
	failed := func(name string) model.InstanceResult {
		return model.InstanceResult{Instance: model.Instance{Name: name, Pinned: true}, Errors: []error{errors.New("refused")}}
	}
	mixed := func(name string) model.InstanceResult {
		r := read(name, false)
		r.Samples[0].Mixed = "sample 1 reached different API server processes"
		return r
	}
	leases := liveInstances{Count: 3, Source: api.LiveFromLeases, Names: []string{"cp-a", "cp-b", "cp-c"}}
	// 5,000 identity leases (issue 35: the line listed them all, 115 KB).
	many := liveInstances{Count: 5000, Source: api.LiveFromLeases}
	for i := range 5000 {
		many.Names = append(many.Names, fmt.Sprintf("cp-%04d", i))
	}
	var reached []model.InstanceResult
	for i := range 64 {
		reached = append(reached, read(fmt.Sprintf("lb#%d", i), false))
	}
	for _, tc := range []struct {
		name    string
		results []model.InstanceResult
		live    liveInstances
		bal     *BalancerRun
		want    api.InstanceCoverage
	}{
		{"every instance pinned", []model.InstanceResult{read("a", true), read("b", true), read("c", true)}, leases, nil,
			api.InstanceCoverage{Read: 3, Live: 3, Source: api.LiveFromLeases, LiveNames: leases.Names}},
		{"one pinned instance down", []model.InstanceResult{read("a", true), failed("b"), read("c", true)}, leases, nil,
			api.InstanceCoverage{Read: 2, Live: 3, Source: api.LiveFromLeases, LiveNames: leases.Names, NotReached: []string{"b"}}},
		{"a lease without a ready endpoint", []model.InstanceResult{read("a", true), read("b", true)}, leases, nil,
			api.InstanceCoverage{Read: 2, Live: 3, Source: api.LiveFromLeases, LiveNames: leases.Names, NotReached: []string{"1 of the 3 live (cp-a, cp-b, cp-c)"}}},
		{"through the balancer, out of time", []model.InstanceResult{read("lb", false)}, leases, &BalancerRun{Connections: 4, TimedOut: true},
			api.InstanceCoverage{Read: 1, Live: 3, Source: api.LiveFromLeases, LiveNames: leases.Names, ThroughBalancer: true, Connections: 4,
				NotReached: []string{"2 of the 3 live (cp-a, cp-b, cp-c): the time bound of the search through the load balancer was reached"}}},
		{"unknown", []model.InstanceResult{read("lb", false)}, liveInstances{}, nil, api.InstanceCoverage{Read: 1}},
		{"an L7 balancer", []model.InstanceResult{mixed("lb"), mixed("lb#2"), read("lb#3", false)}, leases, &BalancerRun{Connections: 3},
			api.InstanceCoverage{Read: 1, Live: 3, Source: api.LiveFromLeases, LiveNames: leases.Names, ThroughBalancer: true, Connections: 3,
				NotReached: []string{"2 read through the load balancer whose samples cannot be tied to one process (a connection reached several, or was not shown to stay on one): of no one instance"}}},
		{"5000 leases, 64 reached", reached, many, &BalancerRun{Connections: 64},
			api.InstanceCoverage{Read: 64, Live: 5000, Source: api.LiveFromLeases, LiveNames: many.Names, ThroughBalancer: true, Connections: 64,
				NotReached: []string{"4936 of the 5000 live (the first 10: cp-0000, cp-0001, cp-0002, cp-0003, cp-0004, cp-0005, cp-0006, cp-0007, cp-0008, cp-0009); the 5000 identity leases far outnumber the 64 processes reached after 64 connection(s): they may not all be live API server processes"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Coverage(tc.results, tc.live, tc.bal)); diff != "" {
				t.Errorf("coverage (-want +got):\n%s", diff)
			}
		})
	}
}
