package upstream

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/apis/example"
)

// TestCodecRoundTrip: an example Pod is stored as example/v1 protobuf
// (the "k8s\x00" envelope) and decoded back to the internal type.
func TestCodecRoundTrip(t *testing.T) {
	in := &example.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: "7", Labels: map[string]string{"app": "x"}},
		Spec: example.PodSpec{NodeName: "node-1"}}
	data, err := runtime.Encode(codec, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 4 || string(data[:4]) != "k8s\x00" {
		t.Errorf("encoded %q, want the protobuf envelope", data[:min(len(data), 8)])
	}
	out := NewPod()
	if _, _, err := codec.Decode(data, nil, out); err != nil {
		t.Fatal(err)
	}
	got := out.(*example.Pod)
	got.TypeMeta = metav1.TypeMeta{}
	if diff := cmp.Diff(in, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if _, ok := NewPodList().(*example.PodList); !ok {
		t.Errorf("NewPodList() = %T", NewPodList())
	}
}
