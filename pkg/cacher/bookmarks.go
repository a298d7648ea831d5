package cacher

import (
	"time"

	"k8s.io/utils/clock"
)

// bookmarkBuckets schedules watchers for their next bookmark in one-second
// buckets (upstream watcherBookmarkTimeBuckets, cacher.go:200-250): a
// watcher due at X gets its bookmark within (X-1s, X+1s).
//
// Not safe for concurrent use: the Cacher lock guards it (hence the Locked
// suffixes).
type bookmarkBuckets struct {
	buckets   map[int64][]*cacheWatcher
	created   time.Time
	startID   int64
	clock     clock.PassiveClock
	frequency time.Duration
}

func newBookmarkBuckets(c clock.PassiveClock, frequency time.Duration) *bookmarkBuckets {
	return &bookmarkBuckets{buckets: map[int64][]*cacheWatcher{}, created: c.Now(), clock: c, frequency: frequency}
}

// addLocked schedules w; a watcher with no next bookmark is dropped.
func (b *bookmarkBuckets) addLocked(w *cacheWatcher) bool {
	next, ok := w.nextBookmarkTime(b.clock.Now(), b.frequency)
	if !ok {
		return false
	}
	id := max(int64(next.Sub(b.created)/time.Second), b.startID)
	b.buckets[id] = append(b.buckets[id], w)
	return true
}

// popExpiredLocked removes and returns every bucket that is due.
func (b *bookmarkBuckets) popExpiredLocked() [][]*cacheWatcher {
	current := int64(b.clock.Since(b.created) / time.Second)
	out := make([][]*cacheWatcher, 0, 2)
	for ; b.startID <= current; b.startID++ {
		if ws, ok := b.buckets[b.startID]; ok {
			delete(b.buckets, b.startID)
			out = append(out, ws)
		}
	}
	return out
}
