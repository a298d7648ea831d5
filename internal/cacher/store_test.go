package cacher

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func keys(s *snapshot) []string {
	var ks []string
	for _, o := range s.objects {
		ks = append(ks, o.Key())
	}
	return ks
}

// TestStoreKeepsKeyOrderAndSnapshots: the store lists objects by key after
// any sequence of changes, and a snapshot taken before a change keeps the
// state it was taken at (the intervals of running watchers hold them).
func TestStoreKeepsKeyOrderAndSnapshots(t *testing.T) {
	s := newStore()
	s.replaceLocked([]*Object{{Namespace: "b", Name: "2"}, {Namespace: "a", Name: "1"}, {Name: "node"}}, 10)
	before := s.snapshotLocked()
	if again := s.snapshotLocked(); again != before {
		t.Error("two snapshots without a change in between are not shared")
	}
	s.updateLocked(false, &Object{Namespace: "a", Name: "0", ResourceVersion: 11}, 11) // added first
	s.updateLocked(false, &Object{Namespace: "b", Name: "2", ResourceVersion: 12}, 12) // modified
	s.updateLocked(true, &Object{Namespace: "a", Name: "1"}, 13)                       // deleted
	s.updateLocked(true, &Object{Namespace: "z", Name: "gone"}, 14)                    // deleting what is not there
	after := s.snapshotLocked()
	if diff := cmp.Diff([]string{"/a/1", "/b/2", "/node"}, keys(before)); diff != "" || before.rv != 10 {
		t.Errorf("snapshot at rv %d changed (-want +got):\n%s", before.rv, diff)
	}
	if diff := cmp.Diff([]string{"/a/0", "/b/2", "/node"}, keys(after)); diff != "" || after.rv != 14 {
		t.Errorf("snapshot at rv %d (-want +got):\n%s", after.rv, diff)
	}
	if o, ok := s.getLocked("/b/2"); !ok || o.ResourceVersion != 12 {
		t.Errorf("getLocked(/b/2) = %+v, %v: want the version of rv 12", o, ok)
	}
	if _, ok := s.getLocked("/a/1"); ok {
		t.Error("a deleted object is still there")
	}
}
