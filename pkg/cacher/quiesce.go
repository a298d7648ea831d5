package cacher

import (
	"sync/atomic"
	"time"
)

// parkKind says where a goroutine of the cache is, or is about to be,
// blocked. The set of kinds is the set of blocking selects in this package.
type parkKind int32

const (
	// parkRunning: between selects; it will act before it parks again.
	parkRunning parkKind = iota
	// parkResult: a watcher in sendWatchCacheEvent, on result <- event
	// (and done, and in the initial phase the stall deadline).
	parkResult
	// parkInput: a watcher in process, on <-input (and ctx.Done).
	parkInput
	// parkIncoming: the dispatcher between events, on <-incoming (and the
	// bookmark timer, and stop).
	parkIncoming
	// parkInputRoom: the dispatcher in add, on watcher.input <- event under
	// the budget timer.
	parkInputRoom
	// parkExited: the goroutine returned.
	parkExited
)

// parking is a goroutine's published wait state: a seqlock over the kind,
// the deadline of the timer the select also waits on and, for
// parkInputRoom, the watcher being fed. The goroutine writes it right
// before a blocking select and right after the select returns; a reader
// retries when it sees the sequence change or odd.
//
// Safe for concurrent use: one writer (the goroutine), any readers.
type parking struct {
	seq      atomic.Uint64
	kind     atomic.Int32
	deadline atomic.Int64 // clock time in UnixNano, 0 for none
	target   atomic.Pointer[cacheWatcher]
}

func (p *parking) set(k parkKind, deadline time.Time, target *cacheWatcher) {
	p.seq.Add(1)
	p.kind.Store(int32(k))
	d := int64(0)
	if !deadline.IsZero() {
		d = deadline.UnixNano()
	}
	p.deadline.Store(d)
	p.target.Store(target)
	p.seq.Add(1)
}

// parkSnapshot is one consistent read of a parking.
type parkSnapshot struct {
	kind     parkKind
	deadline int64
	target   *cacheWatcher
	seq      uint64
}

// read returns a consistent view and whether it got one.
func (p *parking) read() (parkSnapshot, bool) {
	s1 := p.seq.Load()
	if s1%2 == 1 {
		return parkSnapshot{}, false
	}
	v := parkSnapshot{kind: parkKind(p.kind.Load()), deadline: p.deadline.Load(), target: p.target.Load(), seq: s1}
	return v, p.seq.Load() == s1
}

// still reports whether nothing was written since v was read.
func (p *parking) still(v parkSnapshot) bool { return p.seq.Load() == v.seq }

func due(deadline int64, now time.Time) bool { return deadline != 0 && now.UnixNano() >= deadline }

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
//	dispatcher on input:     input full, budget deadline not reached, and
//	                         puts = taken + len(input) + 1 (its own event is
//	                         still pending)
//	watcher on result:       result full, done open, stall deadline not
//	                         reached, sends = received + len(result) + 1
//	watcher on input:        input empty and open, request not cancelled,
//	                         puts = taken, sends = received + len(result)
//
// Safe for concurrent use.
func (c *Cacher) Quiescent() bool {
	now := c.clock.Now()
	if !c.dispatcherQuiescent(now) {
		return false
	}
	c.liveMu.Lock()
	defer c.liveMu.Unlock()
	for _, w := range c.live {
		if !w.quiescent(now) {
			return false
		}
	}
	return true
}

func (c *Cacher) dispatcherQuiescent(now time.Time) bool {
	v, ok := c.dispatchPark.read()
	if !ok {
		return false
	}
	switch v.kind {
	case parkExited:
	case parkIncoming:
		if len(c.incoming) > 0 || c.injected.Load() != c.consumed.Load() || due(v.deadline, now) {
			return false
		}
	case parkInputRoom:
		w := v.target
		if len(w.input) < cap(w.input) || due(v.deadline, now) {
			return false
		}
		if w.puts.Load()-w.putsAbandoned.Load() != w.taken.Load()+int64(len(w.input))+1 {
			return false
		}
	default:
		return false
	}
	return c.dispatchPark.still(v)
}

func (w *cacheWatcher) quiescent(now time.Time) bool {
	v, ok := w.park.read()
	if !ok {
		return false
	}
	sent := w.sendAttempts.Load() - w.sendAbandoned.Load()
	switch v.kind {
	case parkExited:
	case parkResult:
		if len(w.result) < cap(w.result) || isClosed(w.done) || due(v.deadline, now) {
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
	return w.park.still(v)
}

// BudgetDeadline returns the clock time at which the dispatcher, blocked on
// a full watcher under the time budget, gives up on it, if that is what it
// is doing. A driver that finds the cache otherwise quiescent steps its
// clock there: nothing else can unblock the dispatcher.
func (c *Cacher) BudgetDeadline() (time.Time, bool) {
	v, ok := c.dispatchPark.read()
	if !ok || v.kind != parkInputRoom || v.deadline == 0 {
		return time.Time{}, false
	}
	return time.Unix(0, v.deadline), true
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
		if v, ok := w.park.read(); ok && v.kind == parkResult {
			n++
		}
	}
	return n
}
