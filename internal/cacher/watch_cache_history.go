package cacher

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"time"
)

// Capacity bounds of the history ring and the channel sizes derived from it,
// the values of upstream watch_cache_history.go:31-38 and :173-189.
const (
	historyLowerBoundCapacity = 100
	historyUpperBoundCapacity = 100 * 1024

	minWatchChanSize = 10
	// maxWatchChanSize caps the channels of a resource without an indexed
	// trigger.
	maxWatchChanSize = 100
	// maxWatchChanSizeUntriggered caps them for a resource with an indexed
	// trigger, for a watch that does not select on the trigger's field
	// (every watch here). Upstream caps a watch that does at 10.
	maxWatchChanSizeUntriggered = 1000
)

// ErrResourceExpired is returned for a watch from a resource version older
// than the history holds. Its text is what a client reads in the 410 Gone
// upstream answers ("too old resource version: RV (OLDEST)"), deliberately
// the same words.
var ErrResourceExpired = errors.New("too old resource version")

// errHistoryUnset: a watch from a resource version asked a history that
// holds no event and was never loaded from a list.
var errHistoryUnset = errors.New("the history holds no event and no list was loaded: nothing to serve a watch from")

// history is the ring of recent events a watch from a resource version is
// served from (upstream watch_cache_history.go). Its capacity starts at 100,
// doubles while the ring is full of events younger than the freshness window
// and halves when the newest quarter is older than it
// (capacityForLocked).
//
// Indices start and end are absolute: event i lives in cache[i%capacity] for
// start <= i < end.
//
// Not safe for concurrent use: the watchCache lock guards it.
type history struct {
	cache      []*watchCacheEvent
	start, end int
	capacity   int
	lower      int
	upper      int
	freshness  time.Duration
	// removedSinceReplace: some event fell off the ring since the last
	// replace, so the ring, not the list resource version, bounds how far
	// back a watch may start (upstream removedEventSinceRelist).
	removedSinceReplace bool
}

func newHistory(freshness time.Duration) *history {
	return &history{
		cache:     make([]*watchCacheEvent, historyLowerBoundCapacity),
		capacity:  historyLowerBoundCapacity,
		lower:     historyLowerBoundCapacity,
		upper:     capacityUpperBound(freshness),
		freshness: freshness,
	}
}

// capacityUpperBound is how far the ring may grow: 100Ki events up to the
// default freshness window, and twice as many for every doubling of the
// window beyond it (a window between two doublings counts as the larger),
// as long as the bound fits in an int32 (upstream
// watch_cache_history.go:57-77).
func capacityUpperBound(freshness time.Duration) int {
	bound := historyUpperBoundCapacity
	for covered := DefaultEventFreshDuration; covered < freshness && bound <= math.MaxInt32/2; covered *= 2 {
		bound *= 2
	}
	return bound
}

func (h *history) fullLocked() bool { return h.end == h.start+h.capacity }

// addLocked appends e. A full ring first takes the capacity the pace of
// events calls for (upstream updateCache, watch_cache_history.go:106-115);
// if it is still full, its oldest event makes room.
func (h *history) addLocked(e *watchCacheEvent) {
	if h.fullLocked() {
		if c := h.capacityForLocked(e.RecordTime); c != h.capacity {
			h.setCapacityLocked(c)
		}
	}
	if h.fullLocked() {
		h.start++
		h.removedSinceReplace = true
	}
	h.cache[h.end%h.capacity] = e
	h.end++
}

// capacityForLocked is the capacity a full ring should have when an event
// recorded at now arrives: double (up to the upper bound) when even its
// oldest event is younger than the freshness window, so that the window
// fits; half (down to the lower bound) when its newest quarter is already
// older than the window, so that a quiet resource gives memory back; else
// unchanged (upstream resizeCacheLocked, watch_cache_history.go:120-135).
func (h *history) capacityForLocked(now time.Time) int {
	if now.Sub(h.atLocked(h.start).RecordTime) < h.freshness {
		return min(2*h.capacity, h.upper)
	}
	if newestQuarter := h.atLocked(h.end - h.capacity/4); now.Sub(newestQuarter.RecordTime) > h.freshness {
		return max(h.capacity/2, h.lower)
	}
	return h.capacity
}

// setCapacityLocked moves the ring into c slots, keeping its newest events
// (all of them when growing).
func (h *history) setCapacityLocked(c int) {
	keep := min(h.end-h.start, c)
	ring := make([]*watchCacheEvent, c)
	for i := h.end - keep; i < h.end; i++ {
		ring[i%c] = h.atLocked(i)
	}
	h.start = h.end - keep
	h.cache = ring
	h.capacity = c
}

// resetLocked empties the ring on a replace (upstream ResetLocked).
func (h *history) resetLocked() {
	h.start = h.end
	h.removedSinceReplace = false
	clear(h.cache)
}

// validLocked reports whether absolute index i is still in the ring.
func (h *history) validLocked(i int) bool { return i >= h.start }

// chanSizeLocked is the size of a new watcher's input and result channels
// (upstream suggestedWatchChannelSize, watch_cache_history.go:191-212):
// about one second of the ring, its capacity over the freshness window in
// seconds, rounded up; at least 10, at most 100, or 1000 for a resource
// with an indexed trigger (see maxWatchChanSizeUntriggered).
func (h *history) chanSizeLocked(indexedTrigger bool) int {
	oneSecond := int(math.Ceil(float64(h.capacity) / h.freshness.Seconds()))
	ceiling := maxWatchChanSize
	if indexedTrigger {
		ceiling = maxWatchChanSizeUntriggered
	}
	return min(max(oneSecond, minWatchChanSize), ceiling)
}

// oldestServableRVLocked is the resource version of the oldest change a
// watch can still be served: the one right after the last list while the
// ring has dropped nothing since, else the oldest event in the ring. ok is
// false when there is neither a list nor an event to go by.
func (h *history) oldestServableRVLocked(listRV uint64) (rv uint64, ok bool) {
	if listRV > 0 && !h.removedSinceReplace {
		return listRV + 1, true
	}
	if h.end > h.start {
		return h.atLocked(h.start).ResourceVersion, true
	}
	return 0, false
}

// firstAfterLocked returns the absolute index of the first event newer than
// rv, or an error if changes right after rv are no longer in the ring
// (upstream GetIntervalLocked, watch_cache_history.go:217-250). listRV is
// the resource version of the last replace.
func (h *history) firstAfterLocked(rv, listRV uint64) (int, error) {
	oldest, ok := h.oldestServableRVLocked(listRV)
	if !ok {
		return 0, errHistoryUnset
	}
	if rv+1 < oldest {
		return 0, fmt.Errorf("%w: %d (%d)", ErrResourceExpired, rv, oldest-1)
	}
	// The ring is in resource version order.
	newer := sort.Search(h.end-h.start, func(i int) bool { return h.atLocked(h.start+i).ResourceVersion > rv })
	return h.start + newer, nil
}

// atLocked returns the event at absolute index i (valid only if validLocked).
func (h *history) atLocked(i int) *watchCacheEvent { return h.cache[i%h.capacity] }
