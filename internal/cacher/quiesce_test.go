package cacher

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestQuiescentAgreesWithGoroutineDump cross-checks the accounting: each
// time the cache says it is quiescent, a goroutine dump (a stop-the-world
// snapshot) must show none of its goroutines running or runnable.
func TestQuiescentAgreesWithGoroutineDump(t *testing.T) {
	objs := objects("ns", 300, 100, 100)
	f := newFixture(t, 30*time.Second, objs)
	var watchers []*consumer
	for i := 0; i < 6; i++ {
		opts := WatchOptions{Namespace: "ns", SendInitialEvents: sendInitialEvents(i%2 == 0), AllowWatchBookmarks: true}
		watchers = append(watchers, f.watch(opts))
	}
	var buf []byte
	checked := 0
	for round := 0; round < 60; round++ {
		for i, cs := range watchers {
			if i%3 != 2 { // two in three keep reading
				cs.take(25)
			}
		}
		f.update(objs[round%len(objs)])
		f.step(time.Second)
		if !f.c.Quiescent() {
			t.Fatal("not quiescent after settle")
		}
		var dump []byte
		dump, buf = allStacks(buf)
		for _, g := range bytes.Split(dump, []byte("\n\n")) {
			if !bytes.Contains(g, []byte("internal/cacher.(*")) {
				continue
			}
			// A watcher in exited() has published park.Exited: its deferred
			// Stop and close(result) ran before (processInterval's defers run
			// last-in first-out), and all that is left is removing it from
			// the live list (removeLive), which no driver observes. It may be
			// runnable then, waiting for the live list's lock that Quiescent
			// held.
			if bytes.Contains(g, []byte("internal/cacher.(*cacheWatcher).exited(")) {
				continue
			}
			header := string(g[:bytes.IndexByte(g, '\n')])
			if strings.Contains(header, "[running]") || strings.Contains(header, "[runnable]") {
				t.Fatalf("round %d: Quiescent, but a goroutine of the cache is not parked:\n%s", round, g)
			}
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("nothing checked")
	}
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
