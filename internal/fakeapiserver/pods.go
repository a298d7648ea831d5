package fakeapiserver

import (
	"encoding/json"
	"net/http"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// PodsPath is the cluster-wide pods list.
const PodsPath = "/api/v1/pods"

// servePods answers the pods list with the field selector status.podIP=IP
// (the one the plugin sends) from Server.Pods, as kube-apiserver would;
// ForbidPods answers 403, as RBAC without the pods rule does.
func (s *Server) servePods(w http.ResponseWriter, r *http.Request) {
	if s.ForbidPods {
		status(w, http.StatusForbidden, `pods is forbidden: User "watch-doctor" cannot list resource "pods" in API group "" at the cluster scope`)
		return
	}
	sel := r.URL.Query().Get("fieldSelector")
	ip, ok := strings.CutPrefix(sel, "status.podIP=")
	if !ok {
		status(w, http.StatusBadRequest, "want fieldSelector=status.podIP=IP, got "+sel)
		return
	}
	list := corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}}
	for _, p := range s.Pods {
		if p.Status.PodIP == ip || s.IgnorePodSelector {
			list.Items = append(list.Items, p)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(list)
}

// Pod is a running pod at ip, its controller owner ("Kind/name", or ""
// for a bare pod).
func Pod(namespace, name, ip, owner string, hostNetwork bool) corev1.Pod {
	p := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       corev1.PodSpec{HostNetwork: hostNetwork},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip},
	}
	if kind, n, ok := strings.Cut(owner, "/"); ok {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: n, Controller: ptr.To(true)}}
	}
	return p
}
