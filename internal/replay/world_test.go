package replay

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const worldScenario = `name: world
description: two namespaces of pods, updates in one of them from 10s to 20s
duration: 1m
resources:
- name: pods
  objects:
  - namespace: a
    count: 2
    bytes: 100
  - namespace: b
    count: 1
    bytes: 50
  updates:
  - namespace: a
    perSecond: 1.5
    from: 10s
    until: 20s
clients:
- name: c
  model: healthy
`

func testWorld(t *testing.T) *world {
	t.Helper()
	sc, err := Parse(strings.NewReader(worldScenario))
	if err != nil {
		t.Fatal(err)
	}
	return newWorld(sc)
}

// TestWorldInitial: objects are named after the resource, numbered per
// namespace, with resource versions from firstResourceVersion on.
func TestWorldInitial(t *testing.T) {
	type obj struct {
		NS, Name string
		RV       uint64
		Size     int
	}
	st := testWorld(t).initial()
	if len(st) != 1 || st[0].Name != "pods" || st[0].ResourceVersion != firstResourceVersion+2 {
		t.Fatalf("initial = %+v", st)
	}
	var got []obj
	for _, o := range st[0].Objects {
		got = append(got, obj{o.Namespace, o.Name, o.ResourceVersion, o.Size})
	}
	want := []obj{{"a", "pod-00000", 1000, 100}, {"a", "pod-00001", 1001, 100}, {"b", "pod-00000", 1002, 50}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
}

// TestWorldChangesAt: floor(rate * elapsed) updates by the end of each
// tick, round-robin over the stream's objects, none outside [from, until).
func TestWorldChangesAt(t *testing.T) {
	w := testWorld(t)
	var got []string
	for tick := time.Duration(0); tick < 30*time.Second; tick += time.Second {
		for _, c := range w.changesAt(tick, time.Second) {
			if c.resource != "pods" || c.typ != "MODIFIED" {
				t.Errorf("change %+v", c)
			}
			got = append(got, tick.String()+" "+c.obj.Namespace+"/"+c.obj.Name)
		}
	}
	// 1.5/s over 10 s: 15 updates, the first at the end of the 10s tick.
	if len(got) != 15 || got[0] != "10s a/pod-00000" || got[1] != "11s a/pod-00001" || got[2] != "11s a/pod-00000" || got[14] != "19s a/pod-00000" {
		t.Errorf("changes %q", got)
	}
	r := w.byName["pods"]
	if r.rv != firstResourceVersion+2+15 {
		t.Errorf("resource version %d after 15 updates", r.rv)
	}
	if r.inScope("a") != 2 || r.inScope("b") != 1 || r.inScope("") != 3 || r.inScope("c") != 0 {
		t.Errorf("inScope a %d, b %d, all %d, c %d", r.inScope("a"), r.inScope("b"), r.inScope(""), r.inScope("c"))
	}
}

// TestSnapshotAt: an interval taken at rv holds, of every object, the
// version current at rv, and none of an object created after it.
func TestSnapshotAt(t *testing.T) {
	w := testWorld(t)
	w.changesAt(10*time.Second, time.Second) // a/pod-00000 at 1003
	r := w.byName["pods"]
	for _, tc := range []struct {
		rv   uint64
		want map[versionKey]int
	}{
		{999, map[versionKey]int{}},
		{1001, map[versionKey]int{{"a", "pod-00000", 1000}: 100, {"a", "pod-00001", 1001}: 100}},
		{1003, map[versionKey]int{{"a", "pod-00000", 1003}: 100, {"a", "pod-00001", 1001}: 100, {"b", "pod-00000", 1002}: 50}},
	} {
		held := map[versionKey]int{}
		r.snapshotAt(tc.rv, held)
		if diff := cmp.Diff(tc.want, held, cmp.AllowUnexported(versionKey{})); diff != "" {
			t.Errorf("at %d (-want +got):\n%s", tc.rv, diff)
		}
	}
	for in, want := range map[string]string{"pods": "pod", "endpoints": "endpoint", "s": "s", "sheep": "sheep"} {
		if got := singular(in); got != want {
			t.Errorf("singular(%q) = %q, want %q", in, got, want)
		}
	}
}
