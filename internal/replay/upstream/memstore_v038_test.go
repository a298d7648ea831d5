//go:build apiserver_v038

package upstream

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/apis/example"
	"k8s.io/apiserver/pkg/storage"
)

// TestMemStoreOnce runs v0.38's one-attempt writes against MemStore: at
// the current revision they write, at a stale one they fail with
// ResourceVersionConflicts and change nothing. Compiled only against
// v0.38 (make test-replay-v1.38).
func TestMemStoreOnce(t *testing.T) {
	ctx := context.Background()
	s := NewMemStore(codec, NewPod, NewPodList, "/pods", 2)
	pod := &example.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}}
	var created example.Pod
	if _, err := s.UpdateOnce(ctx, "/pods/ns/a", &storage.ObjState{}, pod.DeepCopy(), 0, &created, true); err != nil {
		t.Fatalf("UpdateOnce creating: %v", err)
	}
	if _, err := s.UpdateOnce(ctx, "/pods/ns/b", &storage.ObjState{}, pod.DeepCopy(), 0, &example.Pod{}, false); !storage.IsNotFound(err) {
		t.Errorf("UpdateOnce of a missing key without ignoreNotFound: %v, want NotFound", err)
	}
	pod.Labels = map[string]string{"v": "2"}
	state, err := s.UpdateOnce(ctx, "/pods/ns/a", &storage.ObjState{Rev: 2}, pod.DeepCopy(), 0, &example.Pod{}, false)
	if err != nil || state.Rev != 3 {
		t.Fatalf("UpdateOnce at the current revision: %v, %+v; want revision 3", err, state)
	}
	if _, err := s.UpdateOnce(ctx, "/pods/ns/a", &storage.ObjState{Rev: 2}, pod.DeepCopy(), 0, &example.Pod{}, false); !storage.IsConflict(err) {
		t.Errorf("UpdateOnce at a stale revision: %v, want a conflict", err)
	}
	if err := s.DeleteOnce(ctx, "/pods/ns/a", &storage.ObjState{Rev: 2, Data: state.Data}, &example.Pod{}); !storage.IsConflict(err) {
		t.Errorf("DeleteOnce at a stale revision: %v, want a conflict", err)
	}
	var gone example.Pod
	if err := s.DeleteOnce(ctx, "/pods/ns/a", state, &gone); err != nil || gone.Labels["v"] != "2" {
		t.Fatalf("DeleteOnce at the current revision: %v, deleted %+v", err, gone.ObjectMeta)
	}
	if err := s.Get(ctx, "/pods/ns/a", storage.GetOptions{}, &example.Pod{}); !storage.IsNotFound(err) {
		t.Errorf("Get after DeleteOnce: %v, want NotFound", err)
	}
}

// newMemStoreForTests is memstore_test.go's, which the v0.38 build leaves
// out (its storage test suite's functions take other arguments there).
func newMemStoreForTests() *MemStore {
	return NewMemStore(codec, NewPod, NewPodList, "/pods", 2)
}
