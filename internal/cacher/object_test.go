package cacher

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestObjectKey(t *testing.T) {
	for _, tc := range []struct {
		o    Object
		want string
	}{
		{Object{Namespace: "ns", Name: "a"}, "/ns/a"},
		{Object{Name: "node-1"}, "/node-1"},
	} {
		if got := tc.o.Key(); got != tc.want {
			t.Errorf("%+v Key() = %q, want %q", tc.o, got, tc.want)
		}
	}
}

// TestObjectDeepCopy: the copy is equal and private; Objects carry no
// type metadata.
func TestObjectDeepCopy(t *testing.T) {
	o := &Object{Namespace: "ns", Name: "a", ResourceVersion: 7, Size: 100, InitialEventsEnd: true}
	c, ok := o.DeepCopyObject().(*Object)
	if !ok || c == o || *c != *o {
		t.Fatalf("DeepCopyObject() = %#v, want an equal copy of %#v", c, o)
	}
	c.Size = 1
	if o.Size != 100 {
		t.Error("changing the copy changed the original")
	}
	if gvk := o.GetObjectKind().GroupVersionKind(); gvk != (schema.GroupVersionKind{}) {
		t.Errorf("GroupVersionKind = %v, want none", gvk)
	}
}
