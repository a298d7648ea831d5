package cacher

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/cacher/park"
)

// TestQuiescentAgreesWithGoroutineDump cross-checks the accounting: each
// time the cache says it is quiescent, none of its goroutines acts any more
// without an action from outside. Every goroutine of the cache publishes
// Running (or Exited) through its park.Spot right after any select it
// parked in returns, so "acts" is "writes its Spot": the test reads every
// Spot, asks Quiescent, waits until a goroutine dump (a stop-the-world
// snapshot) shows none of the cache's goroutines running or runnable, and
// then requires every Spot unchanged.
//
// Two things a single dump taken right after Quiescent shows are not
// failures, which is why the test waits for the goroutines to park instead
// of failing on the first dump:
//   - A goroutine that published its wait and is evaluating its select
//     (e.g. the dispatcher in fakeTimer.C, or in selectgo before it parks):
//     the park protocol publishes right before the select, and the select
//     finds no case ready, so it parks without writing its Spot.
//   - A watcher in exited(): it published park.Exited after its deferred
//     Stop and close(result) ran; all that is left is removeLive, waiting
//     for the live list's lock that Quiescent held.
//
// Goroutines of the caches of earlier runs of this test (-count) are not
// this cache's: they are told apart by their creator, since the cache's
// goroutines are all started by the test's goroutine (New starts the
// dispatcher, Watch each watcher). A watcher stopped by an earlier run's
// cleanup exits asynchronously and may still be runnable, e.g. right after
// it saw its input closed.
func TestQuiescentAgreesWithGoroutineDump(t *testing.T) {
	objs := objects("ns", 300, 100, 100)
	f := newFixture(t, 30*time.Second, objs)
	var watchers []*consumer
	for i := 0; i < 6; i++ {
		opts := WatchOptions{Namespace: "ns", SendInitialEvents: sendInitialEvents(i%2 == 0), AllowWatchBookmarks: true}
		watchers = append(watchers, f.watch(opts))
	}
	var buf []byte
	var self string
	self, buf = goroutineID(buf)
	checked := 0
	for round := 0; round < 60; round++ {
		for i, cs := range watchers {
			if i%3 != 2 { // two in three keep reading
				cs.take(25)
			}
		}
		f.update(objs[round%len(objs)])
		f.step(time.Second)
		before := readSpots(t, f.c)
		if !f.c.Quiescent() {
			t.Fatal("not quiescent after settle")
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			var dump []byte
			dump, buf = allStacks(buf)
			g, n := notParked(dump, self)
			if n == 0 {
				t.Fatalf("round %d: no goroutine of the cache in the dump (created by goroutine %s):\n%s", round, self, dump)
			}
			if g == "" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: Quiescent, but a goroutine of the cache does not park:\n%s", round, g)
			}
			runtime.Gosched()
		}
		for _, s := range before {
			if !s.spot.Unchanged(s.view) {
				t.Fatalf("round %d: Quiescent, but %s acted afterwards (its park spot changed from %+v)", round, s.name, s.view)
			}
		}
		if !f.c.Quiescent() {
			t.Fatalf("round %d: Quiescent, then not, with no action from outside", round)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("nothing checked")
	}
}

type spotView struct {
	name string
	spot *park.Spot[cacheWatcher]
	view park.View[cacheWatcher]
}

// readSpots reads the published wait of every goroutine of c.
func readSpots(t *testing.T, c *Cacher) []spotView {
	t.Helper()
	c.liveMu.Lock()
	defer c.liveMu.Unlock()
	out := []spotView{{name: "the dispatcher", spot: &c.dispatchPark}}
	for i, w := range c.live {
		out = append(out, spotView{name: fmt.Sprintf("watcher %d of the live list", i), spot: &w.park})
	}
	for i := range out {
		v, ok := out[i].spot.Read()
		if !ok {
			t.Fatalf("%s is writing its park spot after settle", out[i].name)
		}
		out[i].view = v
	}
	return out
}

// notParked returns the stack of a running or runnable goroutine of this
// package started by goroutine creator, "" if there is none, and how many
// goroutines of this package that goroutine started.
func notParked(dump []byte, creator string) (string, int) {
	n := 0
	mine := []byte("internal/cacher.")
	for _, g := range bytes.Split(dump, []byte("\n\n")) {
		if !bytes.Contains(g, []byte("internal/cacher.(*")) {
			continue
		}
		i := bytes.LastIndex(g, []byte("\ncreated by "))
		if i < 0 {
			continue
		}
		by := g[i+len("\ncreated by "):]
		if j := bytes.IndexByte(by, '\n'); j >= 0 {
			by = by[:j]
		}
		if !bytes.Contains(by, mine) || !bytes.HasSuffix(by, []byte(" in goroutine "+creator)) {
			continue
		}
		n++
		header := string(g[:bytes.IndexByte(g, '\n')])
		if strings.Contains(header, "[running]") || strings.Contains(header, "[runnable]") {
			return string(g), n
		}
	}
	return "", n
}

// goroutineID returns the calling goroutine's number as a dump prints it.
func goroutineID(buf []byte) (string, []byte) {
	if len(buf) == 0 {
		buf = make([]byte, 64<<10)
	}
	n := runtime.Stack(buf, false)
	fields := strings.Fields(string(buf[:n]))
	if len(fields) < 2 || fields[0] != "goroutine" {
		panic(fmt.Sprintf("unexpected stack header %q", buf[:min(n, 40)]))
	}
	return fields[1], buf
}

// allStacks returns every goroutine's stack, growing buf until the dump
// fits (runtime.Stack truncates silently), and the buffer for reuse.
func allStacks(buf []byte) (dump, reuse []byte) {
	if len(buf) == 0 {
		buf = make([]byte, 64<<10)
	}
	for {
		if n := runtime.Stack(buf, true); n < len(buf) {
			return buf[:n], buf
		}
		buf = make([]byte, 2*len(buf))
	}
}

// hookCtx is a request context whose Err runs a hook: Quiescent calls Err
// while it judges the watcher, so the hook acts at a chosen instant of the
// judgement, in place of the scheduler.
type hookCtx struct {
	context.Context
	hook func()
}

func (h hookCtx) Err() error {
	h.hook()
	return h.Context.Err()
}

// TestQuiescentJudgesTheDispatcherAfterTheWatchers replays, without
// goroutines, the interleaving that made Quiescent lie: the dispatcher waits
// to put into watcher a's full input; a receives, which moves the
// dispatcher's event into the buffer and makes the dispatcher runnable, and
// has not yet counted the receive in taken. The dispatcher's judgement
// passes then (puts = taken + len(input) + 1, input full). While the
// watchers before a are judged, a counts its receive, drains its input and
// parks on it empty, so a's judgement passes too, before the dispatcher
// has run. Judging the dispatcher again after the watchers catches it.
func TestQuiescentJudgesTheDispatcherAfterTheWatchers(t *testing.T) {
	clk := testingclock.NewFakeClock(epoch)
	c := &Cacher{clock: clk, budgetClock: clk}
	newWatcher := func(ctx context.Context) *cacheWatcher {
		w := &cacheWatcher{input: make(chan *watchCacheEvent, 2), result: make(chan watch.Event, 2), done: make(chan struct{}), ctx: ctx}
		w.park.Set(parkInput, time.Time{}, nil)
		return w
	}
	a := newWatcher(context.Background())
	const puts = 10
	a.puts.Store(puts)
	a.input <- &watchCacheEvent{}
	a.input <- &watchCacheEvent{}                 // the dispatcher's, moved in by a's receive
	a.taken.Store(puts - int64(cap(a.input)) - 1) // a received one and has not counted it
	drained := false
	before := newWatcher(hookCtx{Context: context.Background(), hook: func() {
		if drained {
			return
		}
		drained = true
		a.taken.Add(1)
		for len(a.input) > 0 {
			<-a.input
			a.taken.Add(1)
		}
	}})
	c.live = []*cacheWatcher{before, a}
	c.dispatchPark.Set(parkInputRoom, epoch.Add(time.Second), a)

	if c.Quiescent() {
		t.Fatal("Quiescent while the dispatcher, woken by a's receive, has not run yet")
	}
	if !drained {
		t.Fatal("the hook did not run: the test no longer replays the interleaving")
	}
	// Once the dispatcher has run and parked again, the same state is
	// quiescent: the test does not pass by refusing everything.
	c.dispatchPark.Set(parkIncoming, epoch.Add(time.Second), nil)
	if !c.Quiescent() {
		t.Fatal("not Quiescent with the dispatcher parked on incoming and both watchers on an empty input")
	}
}
