package cacher

import (
	"time"

	"github.com/watch-doctor/watch-doctor/internal/cacher/park"
)

// The waits of the cache's goroutines, published through park.Spot: the
// set of kinds is the set of blocking selects in this package.
const (
	// parkResult: a watcher in sendWatchCacheEvent, on result <- event
	// (and done, and in the initial phase the stall deadline).
	parkResult park.Kind = iota + 1
	// parkInput: a watcher in process, on <-input (and ctx.Done).
	parkInput
	// parkIncoming: the dispatcher between events, on <-incoming (and the
	// bookmark timer, and stop).
	parkIncoming
	// parkInputRoom: the dispatcher in add, on watcher.input <- event under
	// the budget timer (its deadline is on the budget clock); the target is
	// the watcher.
	parkInputRoom
)

// Quiescent reports whether every goroutine of the cache is parked in a
// select none of whose cases can proceed without an action from outside
// (a clock step, an Apply, a consumer receiving, a Stop). A driver that
// steps a fake clock calls it until it holds before each step, which makes
// a replay deterministic. It is exact when every consumer of a result
// channel counts its receives in WatchOptions.Received; without that count a
// watcher whose send completed an instant ago may still look blocked.
//
// How each wait is judged, with the counters that expose a goroutine that
// has already been woken but not yet published it:
//
//	dispatcher on incoming:  incoming empty, every injected event consumed,
//	                         bookmark deadline not reached
//	dispatcher on input:     input full, budget deadline not reached on the
//	                         budget clock, and
//	                         puts = taken + len(input) + 1 (its own event is
//	                         still pending)
//	watcher on result:       result full, done open, stall deadline not
//	                         reached, sends = received + len(result) + 1
//	watcher on input:        input empty and open, request not cancelled,
//	                         puts = taken, sends = received + len(result)
//
// The goroutines are judged one after the other, not at one instant, so
// the dispatcher is judged twice, before and after the watchers, on the
// same view. Once is not enough: its evidence of having been woken does not
// last. A watcher whose input is full and that receives from it while the
// dispatcher waits to put into it (parkInputRoom) moves the dispatcher's
// event into the buffer and makes the dispatcher runnable; until the
// watcher counts the receive in taken, puts = taken + len(input) + 1 still
// holds with input full, so the dispatcher passes. The watcher then drains
// its input and parks on an empty one, and passes too, while the
// dispatcher has not run yet: it then puts events into watchers already
// judged parked. The second judgement closes this: by then either the
// dispatcher has published Running (its view changed), or the watcher that
// woke it, having passed its own judgement on an empty input, has drained
// it, and only the dispatcher refills an input. A watcher can wake nothing else of the
// cache, and the dispatcher wakes a watcher only after publishing Running,
// so no other order needs a second look.
//
// Safe for concurrent use.
func (c *Cacher) Quiescent() bool {
	now := c.clock.Now()
	budgetNow := c.budgetClock.Now()
	v, ok := c.dispatchPark.Read()
	if !ok || !c.dispatcherQuiescent(v, now, budgetNow) {
		return false
	}
	c.liveMu.Lock()
	defer c.liveMu.Unlock()
	for _, w := range c.live {
		if !w.quiescent(now) {
			return false
		}
	}
	return c.dispatcherQuiescent(v, now, budgetNow)
}

// dispatcherQuiescent judges the dispatcher's wait v, read from
// dispatchPark: true if it is parked there and nothing has been written
// since v was read.
func (c *Cacher) dispatcherQuiescent(v park.View[cacheWatcher], now, budgetNow time.Time) bool {
	switch v.Kind {
	case park.Exited:
	case parkIncoming:
		if len(c.incoming) > 0 || c.injected.Load() != c.consumed.Load() || v.Due(now) {
			return false
		}
	case parkInputRoom:
		w := v.Target
		if len(w.input) < cap(w.input) || v.Due(budgetNow) {
			return false
		}
		if w.puts.Load()-w.putsAbandoned.Load() != w.taken.Load()+int64(len(w.input))+1 {
			return false
		}
	default:
		return false
	}
	return c.dispatchPark.Unchanged(v)
}

func (w *cacheWatcher) quiescent(now time.Time) bool {
	v, ok := w.park.Read()
	if !ok {
		return false
	}
	sent := w.sendAttempts.Load() - w.sendAbandoned.Load()
	switch v.Kind {
	case park.Exited:
	case parkResult:
		if len(w.result) < cap(w.result) || isClosed(w.done) || v.Due(now) {
			return false
		}
		if w.received != nil && sent != w.received.Load()+int64(len(w.result))+1 {
			return false
		}
	case parkInput:
		if len(w.input) > 0 || w.inputClosed.Load() || w.ctx.Err() != nil {
			return false
		}
		if w.puts.Load()-w.putsAbandoned.Load() != w.taken.Load() {
			return false
		}
		if w.received != nil && sent != w.received.Load()+int64(len(w.result)) {
			return false
		}
	default:
		return false
	}
	return w.park.Unchanged(v)
}

// BudgetDeadline returns the time on Config.BudgetClock at which the
// dispatcher, blocked on a full watcher under the time budget, gives up on
// it, if that is what it is doing. A driver that finds the cache otherwise
// quiescent steps the budget clock there: nothing else can unblock the
// dispatcher. Config.Clock is not involved.
func (c *Cacher) BudgetDeadline() (time.Time, bool) {
	v, ok := c.dispatchPark.Read()
	if !ok || v.Kind != parkInputRoom || v.Deadline == 0 {
		return time.Time{}, false
	}
	return time.Unix(0, v.Deadline), true
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// BlockedWatchers counts watcher goroutines parked sending to a full result
// channel: what a goroutine dump shows in sendWatchCacheEvent. Meaningful
// when Quiescent holds.
func (c *Cacher) BlockedWatchers() int {
	c.liveMu.Lock()
	defer c.liveMu.Unlock()
	n := 0
	for _, w := range c.live {
		if v, ok := w.park.Read(); ok && v.Kind == parkResult {
			n++
		}
	}
	return n
}
