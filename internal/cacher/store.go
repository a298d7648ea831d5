package cacher

import (
	"sort"
)

// store holds the current version of every object, ordered by key, and
// hands out immutable snapshots of it. Upstream keeps a btree and clones it
// copy-on-write per resource version (store/watch_cache_storage.go:102,
// LatestSnapshotLocked, with ListFromCacheSnapshot on by default since
// 1.34); a snapshot here is a copied slice, built on first use after a change
// and shared by every interval taken before the next change.
//
// Not safe for concurrent use: the watchCache lock guards it (methods that
// need the lock held end in Locked).
type store struct {
	byKey map[string]*Object
	// sorted holds the same objects ordered by Key.
	sorted []*Object
	rv     uint64
	// latest is the snapshot of the current state, nil after a change.
	latest *snapshot
}

// snapshot is the state of the store at one resource version. Immutable:
// safe to share between goroutines without a lock.
type snapshot struct {
	rv      uint64
	objects []*Object
}

func newStore() *store { return &store{byKey: map[string]*Object{}} }

// replaceLocked drops the content and loads objs (upstream ReplaceLocked,
// watch_cache_storage.go:254).
func (s *store) replaceLocked(objs []*Object, rv uint64) {
	s.byKey = make(map[string]*Object, len(objs))
	s.sorted = make([]*Object, 0, len(objs))
	for _, o := range objs {
		s.byKey[o.Key()] = o
		s.sorted = append(s.sorted, o)
	}
	sort.Slice(s.sorted, func(i, j int) bool { return s.sorted[i].Key() < s.sorted[j].Key() })
	s.rv = rv
	s.latest = nil
}

// getLocked returns the current version of key.
func (s *store) getLocked(key string) (*Object, bool) {
	o, ok := s.byKey[key]
	return o, ok
}

// updateLocked applies one event's object at rv.
func (s *store) updateLocked(deleted bool, o *Object, rv uint64) {
	key := o.Key()
	i := sort.Search(len(s.sorted), func(i int) bool { return s.sorted[i].Key() >= key })
	exists := i < len(s.sorted) && s.sorted[i].Key() == key
	switch {
	case deleted && exists:
		s.sorted = append(s.sorted[:i], s.sorted[i+1:]...)
		delete(s.byKey, key)
	case deleted:
	case exists:
		s.sorted[i] = o
		s.byKey[key] = o
	default:
		s.sorted = append(s.sorted, nil)
		copy(s.sorted[i+1:], s.sorted[i:])
		s.sorted[i] = o
		s.byKey[key] = o
	}
	s.rv = rv
	s.latest = nil
}

// snapshotLocked returns the snapshot of the current state.
func (s *store) snapshotLocked() *snapshot {
	if s.latest == nil {
		objs := make([]*Object, len(s.sorted))
		copy(objs, s.sorted)
		s.latest = &snapshot{rv: s.rv, objects: objs}
	}
	return s.latest
}
