package fakeapiserver

import (
	"encoding/json"
	"net/http"
	"time"
)

// LeasesPath is the path of the kube-system Leases list (the API server
// identity leases are selected from it by label).
const LeasesPath = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"

// Lease is one API server identity Lease the fake lists.
type Lease struct {
	// Name is the lease's name (the instance's APIServerID), Hostname its
	// kubernetes.io/hostname label, Holder its holderIdentity.
	Name, Hostname, Holder string
	// Renewed is its renewTime; DurationSeconds its leaseDurationSeconds.
	Renewed         time.Time
	DurationSeconds int
}

// leases answers the Leases list: Leases, as kube-apiserver's identity
// lease controller writes them; 403 to a user without the list rule.
func (s *Server) leases(w http.ResponseWriter, token string) {
	if token != TokenAdmin {
		status(w, http.StatusForbidden, `leases.coordination.k8s.io is forbidden: User "no-debug" cannot list resource "leases" in API group "coordination.k8s.io" in the namespace "kube-system"`)
		return
	}
	items := []map[string]any{}
	for _, l := range s.Leases {
		items = append(items, map[string]any{
			"metadata": map[string]any{"name": l.Name, "namespace": "kube-system", "labels": map[string]string{
				"apiserver.kubernetes.io/identity": "kube-apiserver",
				"kubernetes.io/hostname":           l.Hostname,
			}},
			"spec": map[string]any{
				"holderIdentity":       l.Holder,
				"leaseDurationSeconds": l.DurationSeconds,
				"renewTime":            l.Renewed.UTC().Format("2006-01-02T15:04:05.000000Z07:00"),
			},
		})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"kind": "LeaseList", "apiVersion": "coordination.k8s.io/v1", "metadata": map[string]any{}, "items": items})
}
