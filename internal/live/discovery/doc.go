// Package discovery finds the API server instances of a cluster and tells
// their processes apart: the default/kubernetes EndpointSlices (instances.go,
// discoverylist.go), the identity Leases that count the live ones
// (leases.go, identity.go), and, when no instance answers on its own
// address, the processes reached through the kubeconfig host's load
// balancer, one connection each, fingerprinted by process_start_time_seconds
// and apiserver_id_hash (balancer.go) and named stably (procname.go);
// coverage.go says how many were read. pods.go names the pods behind
// addresses. It imports only internal/live/model of internal/live.
package discovery
