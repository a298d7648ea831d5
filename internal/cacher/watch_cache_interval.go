package cacher

import (
	"errors"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/watch"
)

// intervalBufferSize is how many history events an interval copies per
// visit under the lock (upstream watch_cache_interval.go:298).
const intervalBufferSize = 100

// errIntervalOverwritten: the ring dropped events an interval had still to
// copy. Upstream logs it and ends the watch; its client re-lists.
var errIntervalOverwritten = errors.New("the history dropped events the watch had yet to send")

// interval is the sequence of events one watcher replays before it starts
// streaming (upstream watchCacheInterval, watch_cache_interval.go:35):
//
//   - from a snapshot of the store, for sendInitialEvents=true and for the
//     legacy resourceVersion=0 (and unset) watch: one Added event per object
//     at the snapshot's resource version. Like upstream's lazy snapshot
//     source (watch_cache_interval.go:113, :265) it keeps the whole snapshot
//     referenced until the watcher is gone, every object of the resource, not
//     only those the watcher's scope selects.
//   - from the history ring, for a watch from a resource version: the events
//     newer than it, copied out in batches under the cache's read lock and
//     invalidated if the ring overwrote them meanwhile.
//
// Not safe for concurrent use: one watcher goroutine owns it.
type interval struct {
	rv uint64

	snap *snapshot
	pos  int

	hist     *history
	lock     sync.Locker
	next     int // absolute index of the next history event to copy
	end      int // absolute index past the last one
	buf      []*watchCacheEvent
	bufStart int

	// endBookmark is sent after the last event of a watch-list request
	// (upstream initialEventsEndBookmark, cacher.go:1359-1376).
	endBookmark *watchCacheEvent
}

func newSnapshotInterval(s *snapshot) *interval {
	return &interval{rv: s.rv, snap: s}
}

func newHistoryInterval(h *history, lock sync.Locker, first, end int, rv uint64) *interval {
	return &interval{rv: rv, hist: h, lock: lock, next: first, end: end}
}

// Next returns the next event, nil at the end, or an error once the history
// events it still had to copy were overwritten.
func (i *interval) Next() (*watchCacheEvent, error) {
	if i.snap != nil {
		if i.pos >= len(i.snap.objects) {
			return nil, nil
		}
		o := i.snap.objects[i.pos]
		i.pos++
		return &watchCacheEvent{Type: watch.Added, Object: o, ResourceVersion: i.snap.rv}, nil
	}
	if i.bufStart < len(i.buf) {
		e := i.buf[i.bufStart]
		i.buf[i.bufStart] = nil
		i.bufStart++
		return e, nil
	}
	if i.hist == nil || i.next >= i.end {
		return nil, nil
	}
	i.lock.Lock()
	defer i.lock.Unlock()
	if !i.hist.validLocked(i.next) {
		return nil, fmt.Errorf("%w: next event #%d, the ring now starts at #%d", errIntervalOverwritten, i.next, i.hist.start)
	}
	i.buf = i.buf[:0]
	i.bufStart = 0
	for i.next < i.end && len(i.buf) < intervalBufferSize {
		i.buf = append(i.buf, i.hist.atLocked(i.next))
		i.next++
	}
	e := i.buf[0]
	i.buf[0] = nil
	i.bufStart = 1
	return e, nil
}
