package cacher

import (
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
	// maxWatchChanSizeWithoutIndex: this cache has no indexed trigger
	// functions, so every watcher gets at most this many slots.
	maxWatchChanSizeWithoutIndex = 100
)

// ErrResourceExpired is returned for a watch from a resource version older
// than the history holds (upstream answers 410 Gone, "too old resource
// version").
var ErrResourceExpired = fmt.Errorf("too old resource version")

// history is the ring of recent events a watch from a resource version is
// served from (upstream watch_cache_history.go). Its capacity starts at 100,
// doubles while the ring is full of events younger than the freshness window
// and halves when the newest quarter is older than it (resizeLocked).
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

// capacityUpperBound grows the upper bound with the freshness window as
// upstream does (watch_cache_history.go:57-77): 100Ki at the default 75 s,
// doubled per doubling of the window.
func capacityUpperBound(freshness time.Duration) int {
	if freshness <= DefaultEventFreshDuration {
		return historyUpperBoundCapacity
	}
	exp := int(math.Ceil(math.Log2(freshness.Seconds() / DefaultEventFreshDuration.Seconds())))
	if maxExp := int(math.Floor(math.Log2(math.MaxInt32 / historyUpperBoundCapacity))); exp > maxExp {
		exp = maxExp
	}
	return historyUpperBoundCapacity << exp
}

func (h *history) fullLocked() bool { return h.end == h.start+h.capacity }

// addLocked appends e, first resizing the ring (upstream updateCache,
// watch_cache_history.go:106-115).
func (h *history) addLocked(e *watchCacheEvent) {
	h.resizeLocked(e.RecordTime)
	if h.fullLocked() {
		h.start++
		h.removedSinceReplace = true
	}
	h.cache[h.end%h.capacity] = e
	h.end++
}

// resizeLocked mirrors upstream resizeCacheLocked (watch_cache_history.go:120-135).
func (h *history) resizeLocked(now time.Time) {
	if !h.fullLocked() {
		return
	}
	if now.Sub(h.cache[h.start%h.capacity].RecordTime) < h.freshness {
		if c := min(h.capacity*2, h.upper); c > h.capacity {
			h.setCapacityLocked(c)
		}
		return
	}
	if now.Sub(h.cache[(h.end-h.capacity/4)%h.capacity].RecordTime) > h.freshness {
		if c := max(h.capacity/2, h.lower); c < h.capacity {
			h.setCapacityLocked(c)
		}
	}
}

func (h *history) setCapacityLocked(c int) {
	next := make([]*watchCacheEvent, c)
	if c < h.capacity {
		h.start = h.end - c
	}
	for i := h.start; i < h.end; i++ {
		next[i%c] = h.cache[i%h.capacity]
	}
	h.cache = next
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
// (upstream suggestedWatchChannelSize, watch_cache_history.go:191-212, for a
// resource without indexed trigger functions): one second's worth of the
// ring, at least 10 and at most 100.
func (h *history) chanSizeLocked() int {
	n := int(math.Ceil(float64(h.capacity) / h.freshness.Seconds()))
	return min(max(n, minWatchChanSize), maxWatchChanSizeWithoutIndex)
}

// firstAfterLocked returns the absolute index of the first event newer than
// rv, or an error if rv is older than the ring reaches (upstream
// GetIntervalLocked, watch_cache_history.go:217-250). listRV is the resource
// version of the last replace.
func (h *history) firstAfterLocked(rv, listRV uint64) (int, error) {
	size := h.end - h.start
	var oldest uint64
	switch {
	case listRV > 0 && !h.removedSinceReplace:
		oldest = listRV + 1
	case size > 0:
		oldest = h.cache[h.start%h.capacity].ResourceVersion
	default:
		return 0, fmt.Errorf("watch cache isn't correctly initialized")
	}
	if rv < oldest-1 {
		return 0, fmt.Errorf("%w: %d (%d)", ErrResourceExpired, rv, oldest-1)
	}
	first := sort.Search(size, func(i int) bool {
		return h.cache[(h.start+i)%h.capacity].ResourceVersion > rv
	})
	return h.start + first, nil
}

// atLocked returns the event at absolute index i (valid only if validLocked).
func (h *history) atLocked(i int) *watchCacheEvent { return h.cache[i%h.capacity] }
