package replay

import (
	"time"
)

// A client that relists (Client.Relist) watches again once the server ended
// its watch and it met that end, as client-go's reflector does:
//
//   - while it never had its initial events (the initial-events-end
//     bookmark of a watch-list request), at once: the reflector's
//     watch-list loop opens the next request as soon as the last one
//     closed without that bookmark, with no backoff, and from scratch (its
//     resource version is still "") (k8s.io/client-go v0.37.2
//     tools/cache/reflector.go:840-890);
//   - after it had them, after the reflector's backoff: 800 ms, doubling up
//     to 30 s, back to 800 ms once 2 min passed since the backoff last
//     started over (reflector.go:62-67, built at :317-336 with
//     k8s.io/apimachinery v0.37.2 pkg/util/wait backoff.go:135-153 and
//     :292-304, waited by RunWithContext at :428). The replay waits the
//     delay without its jitter (client-go waits 1 to 2 times it), and at
//     whole ticks. client-go first watches again from its last resource
//     version (reflector.go:572-617), which the cache serves from its
//     history while it still holds it; the replay has no older resource
//     version to resume from, and takes the other path: the cache's 410
//     Gone, the backoff, and a watch-list from scratch.
//
// Each return is a new request: a new handler, a new watcher replaying
// every object of its scope, and the request's APF seats until its watch
// is initialized or its handler returns.
//
// What ends a slow client's watch on a busy resource is mostly the
// dispatcher: its input fills, and the dispatcher closes it (k8s.io/apiserver
// v0.37.2 pkg/storage/cacher/cache_watcher.go:180-231, which logs "Forcing
// ... watcher close due to unresponsiveness" at :214; internal/cacher's
// add mirrors it), outright, or gracefully when it holds the bookmark its
// client waits for. An outright close frees the seats at once: the watcher
// runs through the rest of its interval, each send returning on the closed
// done channel (cache_watcher.go:434-447), into process, which signals
// WatchInitialized (:541). A graceful one holds them until the watcher
// reaches process at its client's pace. Either way the client is told
// only behind what was in flight: a slow client reads its window's worth
// before it meets the end and comes back.
const (
	relistBackoffInit  = 800 * time.Millisecond
	relistBackoffMax   = 30 * time.Second
	relistBackoffReset = 2 * time.Minute
)

// relistState is what a client's finished watches added up to, and when
// it comes back. Owned by the driver.
type relistState struct {
	// returns counts the watches opened again; closures the watches the
	// server ended while the client was connected (every client).
	returns, closures int
	// seatSeconds and returnSeatSeconds are the finished watches' APF
	// seat-seconds, all of them and the returns'.
	seatSeconds, returnSeatSeconds float64
	windowUpdates                  int64
	// gap is the longest no-progress gap of the finished watches.
	gap time.Duration
	// caughtUp is when a watch of the client first had its initial events.
	caughtUp *time.Duration
	// dueAt is when the client watches again, once it met the end of its
	// watch; nil before.
	dueAt *time.Duration
	// backoff is the reflector's next delay (0 until its first);
	// backoffSince when the backoff last started over.
	backoff      time.Duration
	backoffSince time.Duration
}

// metEnd reports whether the client's application met the end of its
// watch: the server ended the response (serverEnded), and the client read
// what came before that end. On HTTP/2 a reset, or the end at a request
// timeout, discards what was unread (read); a closed result channel, and
// on HTTP/1.1 any end, come behind the bytes in flight.
func (r *clientRun) metEnd() bool {
	if r.h == nil || !r.h.serverEnded() {
		return false
	}
	if !r.h.st.http1 && r.h.end != endResultClosed {
		return true
	}
	return r.h.st.endSeen() && r.h.st.readable() == 0
}

// noteEnd sets when a relisting client that met the end of its watch at t
// comes back (see the constants above).
func (r *clientRun) noteEnd(t time.Duration) {
	if !r.spec.Relist || r.dueAt != nil || !r.metEnd() {
		return
	}
	at := t
	if r.initialDone != nil {
		at += r.backoffDelay(t)
	}
	r.dueAt = &at
}

// backoffDelay is the reflector's next delay at t (backoff.go:292-304:
// started over when more than the reset interval passed since it last
// was, else the last delay doubled, at most the cap).
func (r *clientRun) backoffDelay(t time.Duration) time.Duration {
	if r.backoff == 0 {
		r.backoff, r.backoffSince = relistBackoffInit, r.start
	}
	if t-r.backoffSince > relistBackoffReset {
		r.backoff, r.backoffSince = relistBackoffInit, t
	}
	d := r.backoff
	r.backoff = min(2*r.backoff, relistBackoffMax)
	return d
}

// returnDue reports whether the client watches again at t.
func (r *clientRun) returnDue(t time.Duration) bool {
	return r.h != nil && r.dueAt != nil && *r.dueAt <= t
}

// finishWatch adds the client's finished watch to its totals and clears
// what belongs to one watch, before the client watches again at t.
func (r *clientRun) finishWatch(t time.Duration) {
	seats := apfSeatSeconds(r, Epoch().Add(t))
	r.seatSeconds += seats
	if r.returns > 0 {
		r.returnSeatSeconds += seats
	}
	r.windowUpdates += r.h.st.state().WindowUpdates
	last, _ := r.h.writeState()
	if gap, ok := r.watchGap(last, Epoch().Add(t)); ok {
		r.gap = max(r.gap, gap)
	}
	r.returns++
	r.h = nil
	r.taken = 0
	r.expected, r.wantEnd = 0, false
	r.initialDone, r.stoppedAt, r.disconnectedAt, r.dueAt = nil, nil, nil, nil
	r.stopSeen, r.progressAtStop, r.gapAtStop = false, time.Time{}, 0
	r.initializedAt.Store(0)
	r.watchStart = t
}

// markInitialDone records that the client's watch had its initial events
// at t.
func (r *clientRun) markInitialDone(t time.Duration) {
	at := t
	r.initialDone = &at
	if r.caughtUp == nil {
		r.caughtUp = &at
	}
}
