// Package park lets a goroutine publish where it is about to block, so that
// a driver stepping a fake clock can tell a goroutine that is parked from
// one that will still act without outside help. internal/cacher's dispatcher and
// watchers and internal/replay's request handlers use it; each defines its own
// kinds of wait.
//
// The protocol: right before a blocking select the goroutine calls Set with
// the kind of wait and the deadline of the timer the select also waits on;
// right after the select returns it calls Set(Running, ...). A reader calls
// Read, checks what the wait depends on (channel lengths, counters, the
// clock against the deadline), then Unchanged: if nothing was written in
// between, the goroutine was parked where it said for the whole check.
package park

import (
	"sync/atomic"
	"time"
)

// Kind names a wait. Running (the zero value) and Exited mean the same to
// every user; the rest are defined by each user.
type Kind int32

const (
	// Running: between two selects; the goroutine acts before it parks
	// again.
	Running Kind = 0
	// Exited: the goroutine returned.
	Exited Kind = -1
)

// Spot is one goroutine's published wait: a sequence lock over the kind,
// the deadline and an optional target (what the goroutine waits on, e.g.
// the watcher the dispatcher is feeding). The sequence is odd while a write
// is in progress.
//
// Safe for concurrent use by one writer (the goroutine that owns it) and
// any number of readers.
type Spot[T any] struct {
	seq      atomic.Uint64
	kind     atomic.Int32
	deadline atomic.Int64 // UnixNano on the waiter's clock, 0 for none
	target   atomic.Pointer[T]
}

// Set publishes a wait. Only the owning goroutine calls it.
func (s *Spot[T]) Set(k Kind, deadline time.Time, target *T) {
	s.seq.Add(1)
	s.kind.Store(int32(k))
	var d int64
	if !deadline.IsZero() {
		d = deadline.UnixNano()
	}
	s.deadline.Store(d)
	s.target.Store(target)
	s.seq.Add(1)
}

// View is one consistent read of a Spot. A plain value.
type View[T any] struct {
	Kind Kind
	// Deadline is the deadline given to Set in UnixNano, 0 for none.
	Deadline int64
	Target   *T
	seq      uint64
}

// Due reports whether the view's deadline is set and reached at now.
func (v View[T]) Due(now time.Time) bool { return v.Deadline != 0 && now.UnixNano() >= v.Deadline }

// Read returns the published wait, and false if a write was in progress or
// happened during the read (read again).
func (s *Spot[T]) Read() (View[T], bool) {
	before := s.seq.Load()
	if before%2 == 1 {
		return View[T]{}, false
	}
	v := View[T]{Kind: Kind(s.kind.Load()), Deadline: s.deadline.Load(), Target: s.target.Load(), seq: before}
	return v, s.seq.Load() == before
}

// Unchanged reports whether nothing was written since v was read.
func (s *Spot[T]) Unchanged(v View[T]) bool { return s.seq.Load() == v.seq }
