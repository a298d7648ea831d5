package v1alpha1

import "testing"

func TestInstanceCoverage(t *testing.T) {
	for _, tc := range []struct {
		name     string
		c        InstanceCoverage
		complete bool
		text     string
	}{
		{"all pinned", InstanceCoverage{Read: 3, Live: 3, Source: LiveFromLeases}, true, "3 of 3 instances read (identity leases)"},
		{"through the balancer", InstanceCoverage{Read: 2, Live: 2, Source: LiveFromLeases, ThroughBalancer: true, Connections: 3}, true, "2 of 2 instances read (identity leases) through the load balancer after 3 connection(s)"},
		{"one missing", InstanceCoverage{Read: 1, Live: 2, Source: LiveFromEndpointSlices, ThroughBalancer: true, Connections: 16, NotReached: []string{"1 of apiserver-a, apiserver-b"}}, false, "1 of 2 instances read (endpointslices) through the load balancer after 16 connection(s); not reached: 1 of apiserver-a, apiserver-b"},
		{"unknown", InstanceCoverage{Read: 1}, false, "1 instance read, of an unknown number"},
		{"unknown, several", InstanceCoverage{Read: 2}, false, "2 instances read, of an unknown number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.c.Complete(); got != tc.complete {
				t.Errorf("Complete() = %v, want %v", got, tc.complete)
			}
			if got := tc.c.Text(); got != tc.text {
				t.Errorf("Text() = %q, want %q", got, tc.text)
			}
		})
	}
}
