package replay

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	testingclock "k8s.io/utils/clock/testing"
)

// clientRun is one client during one column's replay. Owned by the driver.
type clientRun struct {
	spec  *Client
	name  string
	model Model
	// start is when the client first watches; watchStart when its
	// current watch started (later for a client that relists).
	start      time.Duration
	watchStart time.Duration
	resource   *worldResource
	relistState

	h        *handler
	tokens   float64
	taken    int64
	events   int64
	marks    int64
	expected int
	wantEnd  bool
	startRV  uint64

	initialDone    *time.Duration
	stoppedAt      *time.Duration
	progressAtStop time.Time
	// gapAtStop is the handler's longest initial gap when the stop was
	// seen; stopSeen says progressAtStop and gapAtStop were taken when
	// the clock stepped, before the next tick's reads.
	gapAtStop      time.Duration
	stopSeen       bool
	disconnectedAt *time.Duration
	initializedAt  atomic.Int64 // clock UnixNano; 0 until initialized
}

func expandClients(sc *Scenario, w *world) []*clientRun {
	var out []*clientRun
	for i := range sc.Clients {
		c := &sc.Clients[i]
		m, _ := ParseModel(c.Model)
		for k := 0; k < c.Count; k++ {
			name := c.Name
			if c.Count > 1 {
				name = fmt.Sprintf("%s-%d", c.Name, k+1)
			}
			out = append(out, &clientRun{
				spec:     c,
				name:     name,
				model:    m,
				start:    c.StartAt.Duration + time.Duration(k)*c.Every.Duration,
				resource: w.byName[c.Resource],
			})
			out[len(out)-1].watchStart = out[len(out)-1].start
		}
	}
	return out
}

// noteStop records the handler's progress when its watcher's stop is first
// seen: what it takes afterwards was already buffered.
func (r *clientRun) noteStop() {
	if r.stopSeen {
		return
	}
	r.stopSeen = true
	r.progressAtStop, _ = r.h.writeState()
	r.gapAtStop = r.h.longestInitialGap()
}

func startClient(sc *Scenario, b Backend, clk *testingclock.FakeClock, r *clientRun) error {
	rv, sie := r.spec.request()
	tr := r.spec.transport(sc)
	ctx, cancel := context.WithCancel(context.Background())
	rc := &requestContext{Context: ctx}
	if r.spec.Timeout.Duration > 0 {
		rc.deadline = clk.Now().Add(r.spec.Timeout.Duration)
	}
	h := &handler{
		backend:    b,
		clock:      clk,
		ctx:        rc,
		cancel:     cancel,
		timeout:    r.spec.Timeout.Duration,
		st:         newStream(tr),
		bookmarkSz: int64(tr.BookmarkBytes),
		exited:     make(chan struct{}),
		reset:      make(chan struct{}),
		req: WatchRequest{
			Resource:            r.spec.Resource,
			Namespace:           r.spec.Namespace,
			ResourceVersion:     rv,
			SendInitialEvents:   sie,
			AllowWatchBookmarks: *r.spec.Bookmarks,
		},
	}
	h.req.Received = &h.received
	h.req.OnInitialized = func() { r.initializedAt.CompareAndSwap(0, clk.Now().UnixNano()) }
	h.req.OnStall = h.resetStream
	if sie == nil || *sie {
		r.expected = r.resource.inScope(r.spec.Namespace)
	}
	r.wantEnd = sie != nil && *sie && *r.spec.Bookmarks
	r.startRV = r.resource.rv
	if r.expected == 0 && !r.wantEnd {
		r.markInitialDone(clk.Now().Sub(Epoch()))
	}
	r.h = h
	started := make(chan error, 1)
	go h.serve(started)
	if err := <-started; err != nil {
		return fmt.Errorf("client %q could not watch: %w", r.name, err)
	}
	return nil
}

// readerStarved reports whether some client would read now while its
// handler waits for flow-control credit: only such a client can see its
// watcher's channels fill up if changes keep coming before it reads.
// Reading after every change gives the same results; this check only
// spares a read pass over every client after every change (issue-137631's
// hour has 1000 clients). Valid after a settle.
func readerStarved(runs []*clientRun) bool {
	for _, r := range runs {
		if r.h == nil || r.h.done() || r.allowance() == 0 {
			continue
		}
		if _, blocked := r.h.writeState(); blocked && r.h.st.readable() > 0 {
			return true
		}
	}
	return false
}

// allowance is how many events the client's model lets it read now.
func (r *clientRun) allowance() int {
	switch r.model.Kind {
	case ModelPaced:
		return int(r.tokens)
	case ModelStopsAfter:
		limit := int64(r.model.Events)
		if r.model.AfterInitialEvents {
			limit = int64(r.expected)
			if r.wantEnd {
				limit++
			}
		}
		return int(max(limit-r.taken, 0))
	case ModelDisconnectsAfter:
		if r.disconnectedAt != nil {
			return 0
		}
	}
	return math.MaxInt32
}

// read lets the client's application read what its model allows now and
// reports whether that returned credit to the server (which may then
// write more). Once the handler returned, the client reads what is left
// after a closed result channel, and on HTTP/1.1 the bytes in flight
// whatever the server's reason (a timeout, a failed write); on HTTP/2 a
// reset or the end at a timeout discards them.
func (r *clientRun) read(t time.Duration) bool {
	if r.h.done() && r.h.end != endResultClosed && !(r.h.st.http1 && r.h.serverEnded()) {
		return false
	}
	st := r.h.st
	st.mu.Lock()
	before := st.windowUpdates
	st.mu.Unlock()
	got := st.consume(r.allowance())
	for _, e := range got {
		r.taken++
		if r.model.Kind == ModelPaced {
			r.tokens--
		}
		if e.bookmark {
			r.marks++
		} else {
			r.events++
		}
		if r.initialDone == nil && ((r.wantEnd && e.end) || (!r.wantEnd && r.events >= int64(r.expected))) {
			r.markInitialDone(t)
			r.h.initialOver.Store(true)
		}
	}
	st.mu.Lock()
	after := st.windowUpdates
	st.mu.Unlock()
	return after != before
}
