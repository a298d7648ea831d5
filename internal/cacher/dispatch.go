package cacher

import (
	"time"

	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"

	"github.com/watch-doctor/watch-doctor/internal/cacher/park"
)

// dispatchEvents is the dispatcher goroutine (upstream cacher.go:904-963):
// it hands every applied event to the interested watchers and, every
// bookmarkPeriod, a bookmark to the watchers that are due one.
func (c *Cacher) dispatchEvents() {
	defer c.wg.Done()
	defer c.dispatchPark.Set(park.Exited, time.Time{}, nil)
	t := c.clock.NewTimer(bookmarkPeriod)
	defer t.Stop()
	next := c.clock.Now().Add(bookmarkPeriod)
	for {
		c.dispatchPark.Set(parkIncoming, next, nil)
		select {
		case e := <-c.incoming:
			c.dispatchPark.Set(park.Running, time.Time{}, nil)
			if e.Type != watch.Bookmark {
				c.dispatchEvent(e)
			}
			c.lastProcessedRV = e.ResourceVersion
			c.consumed.Add(1)
		case <-t.C():
			c.dispatchPark.Set(park.Running, time.Time{}, nil)
			t.Reset(bookmarkPeriod)
			next = c.clock.Now().Add(bookmarkPeriod)
			c.dispatchEvent(&watchCacheEvent{Type: watch.Bookmark, ResourceVersion: c.lastProcessedRV})
		case <-c.stopCh:
			return
		}
	}
}

// dispatchEvent hands e to every interested watcher: first without
// blocking, then, for those whose input was full, blocking under the shared
// time budget; the first watcher that outlasts the budget and every one
// after it is forgotten (upstream cacher.go:996-1063). Bookmarks never
// block.
func (c *Cacher) dispatchEvent(e *watchCacheEvent) {
	c.startDispatching(e)
	defer c.finishDispatching()
	if e.Type == watch.Bookmark {
		for _, w := range c.watchersBuffer {
			w.nonblockingAdd(e)
		}
		return
	}
	c.blockedWatchers = c.blockedWatchers[:0]
	for _, w := range c.watchersBuffer {
		if !w.nonblockingAdd(e) {
			c.blockedWatchers = append(c.blockedWatchers, w)
		}
	}
	if len(c.blockedWatchers) == 0 {
		return
	}
	start := c.budgetClock.Now()
	timeout := c.budget.takeAvailable()
	var timer clock.Timer
	var deadline time.Time
	if timeout > 0 {
		timer = c.budgetClock.NewTimer(timeout)
		deadline = start.Add(timeout)
	}
	for _, w := range c.blockedWatchers {
		if !w.add(e, timer, deadline, &c.dispatchPark) {
			timer = nil
		}
	}
	if timer != nil {
		timer.Stop()
	}
	c.budget.returnUnused(timeout - c.budgetClock.Since(start))
}

// startDispatching fills watchersBuffer with the watchers e concerns: for a
// bookmark those due one, else those of its namespace and the cluster-wide
// ones (upstream cacher.go:1083-1153).
func (c *Cacher) startDispatching(e *watchCacheEvent) {
	c.Lock()
	defer c.Unlock()
	c.dispatching = true
	c.watchersBuffer = c.watchersBuffer[:0]
	if e.Type == watch.Bookmark {
		// Stopped watchers stay in their bucket until it is due.
		for _, w := range c.bookmarks.popExpiredLocked() {
			if !w.stopped {
				c.watchersBuffer = append(c.watchersBuffer, w)
				c.expiredBookmark = append(c.expiredBookmark, w)
			}
		}
		return
	}
	if ns := e.Object.Namespace; ns != "" {
		if set, ok := c.watchers[ns]; ok {
			c.watchersBuffer = append(c.watchersBuffer, set.list...)
		}
	}
	if set, ok := c.watchers[""]; ok {
		c.watchersBuffer = append(c.watchersBuffer, set.list...)
	}
}

// finishDispatching runs the stops deferred during the dispatch and
// reschedules the bookmarked watchers (upstream cacher.go:1159-1176).
func (c *Cacher) finishDispatching() {
	c.Lock()
	defer c.Unlock()
	c.dispatching = false
	for _, w := range c.watchersToStop {
		w.stopLocked()
	}
	c.watchersToStop = c.watchersToStop[:0]
	for _, w := range c.expiredBookmark {
		if !w.stopped {
			c.bookmarks.addLocked(w)
		}
	}
	c.expiredBookmark = c.expiredBookmark[:0]
}
