package fakeapiserver

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The pods list answers the status.podIP field selector from Pods, and
// ForbidPods refuses it.
func TestPods(t *testing.T) {
	t.Parallel()
	s := Start(t, "testdata-unused")
	s.Pods = []corev1.Pod{Pod("a", "p", "10.0.0.1", "ReplicaSet/rs", false), Pod("b", "q", "10.0.0.2", "", true)}
	cs, err := kubernetes.NewForConfig(RESTConfig(t, s, TokenAdmin))
	if err != nil {
		t.Fatal(err)
	}
	list, err := cs.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{FieldSelector: "status.podIP=10.0.0.2"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != "q" || !list.Items[0].Spec.HostNetwork || metav1.GetControllerOf(&list.Items[0]) != nil {
		t.Errorf("items %+v: want the bare host-network pod q", list.Items)
	}
	list, err = cs.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{FieldSelector: "status.podIP=10.0.0.1"})
	if err != nil || len(list.Items) != 1 || metav1.GetControllerOf(&list.Items[0]).Name != "rs" {
		t.Errorf("items %+v, %v: want p, owned by rs", list, err)
	}
	s.ForbidPods = true
	if _, err := cs.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{FieldSelector: "status.podIP=10.0.0.1"}); err == nil {
		t.Error("ForbidPods: the list succeeded")
	}
}
