package v1alpha1

import (
	"fmt"
	"strings"
)

// Sources of InstanceCoverage.Live.
const (
	// LiveFromLeases: the kube-apiserver identity Leases of kube-system
	// (label apiserver.kubernetes.io/identity=kube-apiserver) renewed
	// within their leaseDurationSeconds, one per instance.
	LiveFromLeases = "identity leases"
	// LiveFromEndpointSlices: the ready endpoints of the default/kubernetes
	// EndpointSlices, when the leases could not be read or list none.
	LiveFromEndpointSlices = "endpointslices"
)

// InstanceCoverage is how many of the cluster's live API server
// instances a live run read. A run that read fewer than Live is
// incomplete: a stuck watch on an instance not read is not in the report.
type InstanceCoverage struct {
	// Read is how many instances were read (each a process of its own).
	Read int `json:"read"`
	// Live is how many instances the cluster runs (see Source); 0 when
	// unknown.
	Live int `json:"live"`
	// Source is where Live comes from: LiveFromLeases or
	// LiveFromEndpointSlices; "" when unknown.
	Source string `json:"source,omitempty"`
	// LiveNames name the live instances: the leases' hostnames, or the
	// endpoints' addresses.
	LiveNames []string `json:"liveNames,omitempty"`
	// ThroughBalancer is set when the instances' own addresses did not
	// answer and they were reached through the kubeconfig host, one
	// connection each, told apart by process_start_time_seconds.
	ThroughBalancer bool `json:"throughBalancer,omitempty"`
	// Connections is how many connections were opened through the
	// kubeconfig host to reach them.
	Connections int `json:"connections,omitempty"`
	// NotReached names the instances not read, or says how many were not
	// reached when they cannot be told apart.
	NotReached []string `json:"notReached,omitempty"`
}

// Complete reports whether every live instance was read. An unknown
// number of live instances is never complete.
func (c InstanceCoverage) Complete() bool { return c.Live > 0 && c.Read >= c.Live }

// Text is "2 of 3 instances read (identity leases) through the balancer
// after 9 connections; not reached: ...".
func (c InstanceCoverage) Text() string {
	var b strings.Builder
	switch {
	case c.Live > 0:
		fmt.Fprintf(&b, "%d of %d instances read (%s)", c.Read, c.Live, c.Source)
	case c.Read == 1:
		b.WriteString("1 instance read, of an unknown number")
	default:
		fmt.Fprintf(&b, "%d instances read, of an unknown number", c.Read)
	}
	if c.ThroughBalancer {
		fmt.Fprintf(&b, " through the load balancer after %d connection(s)", c.Connections)
	}
	if len(c.NotReached) > 0 {
		b.WriteString("; not reached: " + strings.Join(c.NotReached, ", "))
	}
	return b.String()
}
