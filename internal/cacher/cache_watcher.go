package cacher

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"

	"github.com/watch-doctor/watch-doctor/internal/cacher/park"
)

// Bookmark states of a watcher (upstream cache_watcher.go:39-51):
//
//	          bookmarkAfterResourceVersion == 0
//	  new ───────────────────────────────────────────────► sent
//	   │ (watch-list: wants the bookmark at its start RV)     ▲
//	   ▼                                                      │
//	waiting ──nonblockingAdd(bookmark ≥ RV)──► received ──sendWatchCacheEvent(bookmark)
//
// The state decides how the dispatcher closes a watcher it cannot feed: in
// "received" it drains (graceful: done stays open, the goroutine keeps
// sending what it has), otherwise it stops it outright.
const (
	bookmarkWaiting = iota
	bookmarkReceived
	bookmarkSent
)

// Phase is where a watcher's goroutine is.
type Phase string

const (
	// PhaseInitial: processInterval (or, in LoopInput, processInitialEvents),
	// replaying the interval.
	PhaseInitial Phase = "initial"
	// PhaseStreaming: process, forwarding events from the input channel.
	PhaseStreaming Phase = "streaming"
	// PhaseDone: the goroutine returned and closed the result channel.
	PhaseDone Phase = "done"
)

// cacheWatcher serves one watch (upstream cache_watcher.go:55): the
// dispatcher puts events into input, the watcher's goroutine converts the
// ones its scope selects and sends them to result, which the request
// handler drains.
//
//	processInterval ──(interval done, end bookmark sent)──► process ──(input closed | ctx done)──► exit
//	      │  patched: no successful send for StallTimeout
//	      └────────────────────────────────────────────────────────────────────────────────────► exit
//
// In LoopInput (v1.38) the goroutine starts in process, which first calls
// processInitialEvents; a stall there returns errInitialEventsStalled and
// process returns before it streams (or signals WatchInitialized).
//
// Thread safety: stopped, doneClosed and drainInputBuffer are guarded by
// the Cacher lock (stopLocked, setDrainInputBufferLocked). state is guarded
// by stateMu once the watcher is published, i.e. registered in the Cacher's
// index under the Cacher lock; setBookmarkAfterResourceVersion writes it,
// and bookmarkAfterResourceVersion, without stateMu, under that lock right
// before the registration, which is what makes them visible to the
// dispatcher (it only finds the watcher through the index, under the same
// lock); bookmarkAfterResourceVersion never changes after. The counters,
// park and the atomics below are read by Quiescent and Info from any
// goroutine; everything else is set before the goroutine starts and never
// changed.
type cacheWatcher struct {
	input  chan *watchCacheEvent
	result chan watch.Event
	done   chan struct{}
	ctx    context.Context

	filter              func(*Object) bool
	forget              func(drain bool)
	deadline            time.Time
	allowWatchBookmarks bool
	clock               clock.WithTicker
	stallTimeout        time.Duration
	onInitialized       func()
	onStall             func()
	counters            *counters

	stopped          bool
	doneClosed       bool
	drainInputBuffer bool

	bookmarkAfterResourceVersion uint64
	stateMu                      sync.Mutex
	state                        int

	// iv is the interval being replayed, nil once the initial phase is over:
	// what keeps the snapshot reachable.
	iv atomic.Pointer[interval]

	park          park.Spot[cacheWatcher]
	sendAttempts  atomic.Int64
	sendAbandoned atomic.Int64
	puts          atomic.Int64
	putsAbandoned atomic.Int64
	taken         atomic.Int64
	received      *atomic.Int64
	inputClosed   atomic.Bool

	phase      atomic.Value // Phase
	sent       atomic.Int64
	lastSend   atomic.Int64 // clock UnixNano of the last successful send
	stalled    atomic.Bool
	terminated atomic.Bool
	initialize sync.Once
	exitHook   func(*cacheWatcher)
}

// ResultChan implements watch.Interface.
func (c *cacheWatcher) ResultChan() <-chan watch.Event { return c.result }

// Stop implements watch.Interface: the request is over (upstream
// cache_watcher.go:132).
func (c *cacheWatcher) Stop() { c.forget(false) }

// stopLocked ends the watcher: input is closed on the first call, done on
// the first call made without drain mode. So a watcher forgotten in drain
// mode keeps done open (its goroutine, blocked on result, stays blocked
// until the request ends), and a later Stop of the request closes it
// (upstream cache_watcher.go:137-156). The Cacher lock must be held.
func (c *cacheWatcher) stopLocked() {
	if !c.stopped {
		c.stopped = true
		c.inputClosed.Store(true)
		close(c.input)
	}
	if !c.drainInputBuffer {
		c.closeDoneLocked()
	}
}

// closeDoneLocked closes done once. The Cacher lock must be held.
func (c *cacheWatcher) closeDoneLocked() {
	if !c.doneClosed {
		c.doneClosed = true
		close(c.done)
	}
}

func (c *cacheWatcher) setDrainInputBufferLocked(drain bool) { c.drainInputBuffer = drain }

// nonblockingAdd offers e to the input channel without waiting (upstream
// cache_watcher.go:158-174). Bookmarks older than the one the watcher waits
// for are dropped.
func (c *cacheWatcher) nonblockingAdd(e *watchCacheEvent) bool {
	if e.Type == watch.Bookmark && e.ResourceVersion < c.bookmarkAfterResourceVersion {
		return false
	}
	c.puts.Add(1)
	select {
	case c.input <- e:
		c.markBookmarkAfterRvAsReceived(e)
		return true
	default:
		c.putsAbandoned.Add(1)
		return false
	}
}

// add offers e, waiting on timer when the input channel is full; a watcher
// it cannot feed is forgotten, draining if it holds the bookmark its client
// waits for (upstream cache_watcher.go:180-231). A nil timer means the
// budget is spent: no waiting. timer and deadline are on the Cacher's
// budget clock; dp is the dispatcher's parking spot.
func (c *cacheWatcher) add(e *watchCacheEvent, timer clock.Timer, deadline time.Time, dp *park.Spot[cacheWatcher]) bool {
	if c.nonblockingAdd(e) {
		return true
	}
	closeFunc := func() {
		c.counters.terminated.Add(1)
		c.terminated.Store(true)
		c.stateMu.Lock()
		graceful := c.state == bookmarkReceived
		c.stateMu.Unlock()
		c.forget(graceful)
	}
	if timer == nil {
		closeFunc()
		return false
	}
	c.puts.Add(1)
	dp.Set(parkInputRoom, deadline, c)
	select {
	case c.input <- e:
		dp.Set(park.Running, time.Time{}, nil)
		return true
	case <-timer.C():
		dp.Set(park.Running, time.Time{}, nil)
		c.putsAbandoned.Add(1)
		closeFunc()
		return false
	}
}

// nextBookmarkTime says when the watcher's next bookmark is due (upstream
// cache_watcher.go:233-269): right away while it waits for its start
// bookmark, else every bookmark frequency and 2 s before its deadline.
func (c *cacheWatcher) nextBookmarkTime(now time.Time, frequency time.Duration) (time.Time, bool) {
	if !c.wasBookmarkAfterRvReceived() {
		return time.Time{}, true
	}
	next := now.Add(frequency)
	if c.deadline.IsZero() {
		return next, true
	}
	if pre := c.deadline.Add(-2 * time.Second); pre.Before(next) {
		next = pre
	}
	if next.Before(now) {
		return time.Time{}, false
	}
	return next, true
}

func (c *cacheWatcher) wasBookmarkAfterRvReceived() bool {
	c.stateMu.Lock()
	defer c.stateMu.Unlock()
	return c.state != bookmarkWaiting
}

func (c *cacheWatcher) markBookmarkAfterRvAsReceived(e *watchCacheEvent) {
	if e.Type != watch.Bookmark {
		return
	}
	c.stateMu.Lock()
	defer c.stateMu.Unlock()
	if c.state == bookmarkWaiting {
		c.state = bookmarkReceived
	}
}

func (c *cacheWatcher) wasBookmarkAfterRvSent() bool {
	c.stateMu.Lock()
	defer c.stateMu.Unlock()
	return c.state == bookmarkSent
}

func (c *cacheWatcher) markBookmarkAfterRvSent(e *watchCacheEvent) {
	if e.Type != watch.Bookmark {
		return
	}
	c.stateMu.Lock()
	defer c.stateMu.Unlock()
	c.state = bookmarkSent
}

// setBookmarkAfterResourceVersion: 0 means the client waits for no
// particular bookmark (upstream cache_watcher.go:332-339). Called once,
// under the Cacher lock, before the watcher is registered: see the
// thread-safety note of cacheWatcher for why state needs no stateMu here.
func (c *cacheWatcher) setBookmarkAfterResourceVersion(rv uint64) {
	c.state = bookmarkWaiting
	if rv == 0 {
		c.state = bookmarkSent
	}
	c.bookmarkAfterResourceVersion = rv
}

// convertToWatchEvent turns a cache event into what this watcher's client
// sees, or nil if its scope selects neither the old nor the new object
// (upstream cache_watcher.go:373-412). Objects are shared, not copied:
// consumers must not modify them.
func (c *cacheWatcher) convertToWatchEvent(e *watchCacheEvent) *watch.Event {
	if e.Type == watch.Bookmark {
		return &watch.Event{Type: watch.Bookmark, Object: &Object{ResourceVersion: e.ResourceVersion, InitialEventsEnd: !c.wasBookmarkAfterRvSent()}}
	}
	cur := e.Type != watch.Deleted && c.filter(e.Object)
	old := e.PrevObject != nil && c.filter(e.PrevObject)
	switch {
	case cur && !old:
		return &watch.Event{Type: watch.Added, Object: e.Object}
	case cur && old:
		return &watch.Event{Type: watch.Modified, Object: e.Object}
	case old:
		gone := *e.PrevObject
		gone.ResourceVersion = e.ResourceVersion
		return &watch.Event{Type: watch.Deleted, Object: &gone}
	}
	return nil
}

// sendOutcome is what sendWatchCacheEvent did with one event.
type sendOutcome int

const (
	sendSkipped sendOutcome = iota // not selected by the watcher's scope
	sendDone                       // done was closed: the watcher is stopped
	sendOK                         // the event is in result
	sendStalled                    // patched: no successful send before stallDeadline
)

// sendWatchCacheEvent puts e into result (upstream cache_watcher.go:415-448).
// It blocks while result is full, until done closes, or, when stallDeadline
// is set (the initial phase of a patched cache), until the clock reaches it.
//
// Upstream checks done, then blocks in one select. This one first tries
// the send without blocking, so that it only publishes a parked state (and
// only creates a stall timer) when it is really about to block; the order
// of events on result is the same.
func (c *cacheWatcher) sendWatchCacheEvent(e *watchCacheEvent, stallDeadline time.Time) sendOutcome {
	ev := c.convertToWatchEvent(e)
	if ev == nil {
		return sendSkipped
	}
	select {
	case <-c.done:
		return sendDone
	default:
	}
	c.sendAttempts.Add(1)
	select {
	case c.result <- *ev:
		c.sentOne(e)
		return sendOK
	default:
	}
	var stallC <-chan time.Time
	if !stallDeadline.IsZero() {
		d := stallDeadline.Sub(c.clock.Now())
		if d <= 0 {
			c.sendAbandoned.Add(1)
			return sendStalled
		}
		t := c.clock.NewTimer(d)
		defer t.Stop()
		stallC = t.C()
	}
	c.park.Set(parkResult, stallDeadline, nil)
	select {
	case c.result <- *ev:
		c.park.Set(park.Running, time.Time{}, nil)
		c.sentOne(e)
		return sendOK
	case <-c.done:
		c.park.Set(park.Running, time.Time{}, nil)
		c.sendAbandoned.Add(1)
		return sendDone
	case <-stallC:
		c.park.Set(park.Running, time.Time{}, nil)
		c.sendAbandoned.Add(1)
		return sendStalled
	}
}

func (c *cacheWatcher) sentOne(e *watchCacheEvent) {
	c.markBookmarkAfterRvSent(e)
	c.sent.Add(1)
	c.lastSend.Store(c.clock.Now().UnixNano())
}

// stallDeadline is when the initial phase gives up: StallTimeout after the
// last successful send (or after the phase began). Zero when the patch is
// off. Recomputing it from the last send each time the watcher is about to
// block is the same as resetting one timer after every send, without
// touching a timer on the sends that do not block.
func (c *cacheWatcher) stallDeadline() time.Time {
	if c.stallTimeout <= 0 {
		return time.Time{}
	}
	return time.Unix(0, c.lastSend.Load()).Add(c.stallTimeout)
}

// initialized tells APF the watch is initialized, once (upstream
// process calls utilflowcontrol.WatchInitialized, cache_watcher.go:541).
func (c *cacheWatcher) initialized() {
	c.initialize.Do(func() {
		if c.onInitialized != nil {
			c.onInitialized()
		}
	})
}
