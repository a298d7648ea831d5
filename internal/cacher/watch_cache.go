package cacher

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"
)

const (
	// defaultBookmarkFrequency: how often a watcher that asked for bookmarks
	// gets one (upstream cacher.go:78).
	defaultBookmarkFrequency = time.Minute
	// DefaultEventFreshDuration is the history's freshness window (upstream
	// cacher.go:74).
	DefaultEventFreshDuration = defaultBookmarkFrequency + 15*time.Second
)

// errNotNewer: a change came out of resource version order.
var errNotNewer = errors.New("change not newer than the cache")

// watchCache is the current state plus the recent history of one resource
// (upstream watch_cache.go:80), guarded by one RWMutex: writers (replace,
// processEvent) take it exclusively, intervals read under the read lock.
//
// Safe for concurrent use; methods ending in Locked need the lock held.
type watchCache struct {
	sync.RWMutex
	rv      uint64
	listRV  uint64
	store   *store
	history *history
	clock   clock.PassiveClock
}

func newWatchCache(c clock.PassiveClock, freshness time.Duration) *watchCache {
	return &watchCache{store: newStore(), history: newHistory(freshness), clock: c}
}

// replace loads the result of a list (upstream Replace, watch_cache.go:568).
func (w *watchCache) replace(objs []*Object, rv uint64) {
	w.Lock()
	defer w.Unlock()
	w.history.resetLocked()
	w.store.replaceLocked(objs, rv)
	w.rv = rv
	w.listRV = rv
}

// processEvent records one change and returns the event to dispatch
// (upstream processEvent, watch_cache.go:211-287).
func (w *watchCache) processEvent(t watch.EventType, o *Object) (*watchCacheEvent, error) {
	if t != watch.Added && t != watch.Modified && t != watch.Deleted {
		return nil, fmt.Errorf("unsupported event type %q: use %s, %s or %s", t, watch.Added, watch.Modified, watch.Deleted)
	}
	w.Lock()
	defer w.Unlock()
	if o.ResourceVersion <= w.rv {
		return nil, fmt.Errorf("%w: resource version %d of %q, the cache's %d", errNotNewer, o.ResourceVersion, o.Key(), w.rv)
	}
	e := &watchCacheEvent{Type: t, Object: o, ResourceVersion: o.ResourceVersion, RecordTime: w.clock.Now()}
	if prev, ok := w.store.getLocked(o.Key()); ok {
		e.PrevObject = prev
	}
	w.history.addLocked(e)
	w.rv = o.ResourceVersion
	w.store.updateLocked(t == watch.Deleted, o, o.ResourceVersion)
	return e, nil
}

// chanSize is the channel size for a new watcher; indexedTrigger says
// whether the resource has an indexed trigger.
func (w *watchCache) chanSize(indexedTrigger bool) int {
	w.RLock()
	defer w.RUnlock()
	return w.history.chanSizeLocked(indexedTrigger)
}

// resourceVersion is the newest resource version the cache has seen.
func (w *watchCache) resourceVersion() uint64 {
	w.RLock()
	defer w.RUnlock()
	return w.rv
}

// intervalLocked picks where a watch starts (upstream getAllEventsSinceLocked,
// watch_cache.go:647-671): from the store for sendInitialEvents=true, and for
// resource version 0 when sendInitialEvents is unset (the legacy "current
// state, then changes"); from the history otherwise.
func (w *watchCache) intervalLocked(rv uint64, sendInitialEvents *bool) (*interval, error) {
	if sendInitialEvents != nil && *sendInitialEvents {
		return newSnapshotInterval(w.store.snapshotLocked()), nil
	}
	if rv == 0 {
		if sendInitialEvents == nil {
			return newSnapshotInterval(w.store.snapshotLocked()), nil
		}
		rv = w.rv
	}
	first, err := w.history.firstAfterLocked(rv, w.listRV)
	if err != nil {
		return nil, err
	}
	return newHistoryInterval(w.history, w.RLocker(), first, w.history.end, rv), nil
}
