package diagnosis

import "time"

// PastStallBound reports whether a watch that started initializing at
// start had been initializing for longer than StallBound at at: a
// suspect, which only a goroutine dump or an execution trace decides.
//
// A missing time (either zero: a request without a start, a sample
// without a capture time) counts as past the bound. It fails closed: an
// age that cannot be computed must never produce an all-clear. The one
// rule of the diagnosis (decideAggregated), of the live run's cheap look
// (whether a dump is needed) and of serve's undecided watches.
func PastStallBound(start, at time.Time) bool {
	return start.IsZero() || at.IsZero() || at.Sub(start) > StallBound
}
