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

// popExpiredLocked removes the watchers of every bucket that is due and
// returns them, earliest bucket first.
func (b *bookmarkBuckets) popExpiredLocked() []*cacheWatcher {
	due := int64(b.clock.Since(b.created) / time.Second)
	var out []*cacheWatcher
	for ; b.startID <= due; b.startID++ {
		out = append(out, b.buckets[b.startID]...)
		delete(b.buckets, b.startID)
	}
	return out
}
