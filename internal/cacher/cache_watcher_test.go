package cacher

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/watch"
)

// TestStallTimeout checks the patch on a fake clock: the timer is reset by
// every successful send, acts only in the initial phase, and does nothing
// at 0.
func TestStallTimeout(t *testing.T) {
	type want struct {
		phase     Phase
		stalled   bool
		stalledAt time.Duration // since the watch started; 0 if not stalled
		events    int
	}
	tests := []struct {
		name  string
		stall time.Duration
		// every reads one event every that often, for reads times; then
		// the consumer stops reading.
		every time.Duration
		reads int
		// streaming watches start after the initial events.
		streaming bool
		runFor    time.Duration
		want      want
	}{{
		name:  "progressing slower than the timeout in total, faster per event: never stopped",
		stall: 30 * time.Second, every: 20 * time.Second, reads: 100, runFor: 40 * time.Minute,
		want: want{phase: PhaseStreaming, events: 41},
	}, {
		name:  "stops reading: stopped StallTimeout after the last successful send",
		stall: 30 * time.Second, every: 20 * time.Second, reads: 3, runFor: 10 * time.Minute,
		// 10 buffered at start, one send per read at 20s, 40s, 60s; the
		// last send at 60s, so stopped at 90s.
		want: want{phase: PhaseDone, stalled: true, stalledAt: 90 * time.Second, events: 3},
	}, {
		name:  "no effect at 0: blocked for the whole hour",
		stall: 0, every: 20 * time.Second, reads: 3, runFor: time.Hour,
		want: want{phase: PhaseInitial, events: 3},
	}, {
		name:  "no effect in the streaming phase",
		stall: 30 * time.Second, every: 20 * time.Second, reads: 0, streaming: true, runFor: time.Hour,
		want: want{phase: PhaseStreaming},
	}}
	for _, tt := range tests {
		for _, loop := range loops {
			t.Run(loopName(loop)+"/"+tt.name, func(t *testing.T) {
				objs := objects("ns", 40, 1000, 100)
				f := newFixtureLoop(t, tt.stall, objs, loop)
				opts := WatchOptions{Namespace: "ns", SendInitialEvents: sendInitialEvents(true), AllowWatchBookmarks: true}
				if tt.streaming {
					opts.SendInitialEvents = sendInitialEvents(false)
				}
				cs := f.watch(opts)
				if tt.streaming {
					// Fill result (10) and leave the input room so that the
					// dispatcher never has to close it: the watcher is blocked
					// sending in process.
					for i := 0; i < 15; i++ {
						f.update(objs[i])
					}
				}
				start := f.clock.Now()
				var stalledAt time.Duration
				reads := 0
				for elapsed := time.Duration(0); elapsed < tt.runFor; elapsed += time.Second {
					if reads < tt.reads && elapsed > 0 && elapsed%tt.every == 0 {
						reads += cs.take(1)
					}
					f.step(time.Second)
					if info := cs.w.Info(); info.Stalled && stalledAt == 0 {
						stalledAt = f.clock.Now().Sub(start)
					}
				}
				info := cs.w.Info()
				got := want{phase: info.Phase, stalled: info.Stalled, stalledAt: stalledAt, events: len(cs.events)}
				if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(want{})); diff != "" {
					t.Errorf("outcome (-want +got):\n%s", diff)
				}
				wantStalled := int64(0)
				if tt.want.stalled {
					wantStalled = 1
				}
				if got := f.c.Counters().StalledWatchers; got != wantStalled {
					t.Errorf("StalledWatchers = %d, want %d", got, wantStalled)
				}
			})
		}
	}
}

// TestStallKeepsAPFSeatsAndCallsOnStall checks that a watcher stopped by
// the stall timeout does not count as initialized (PR 141899 returns before
// process, where WatchInitialized is called: the seats stay held until the
// handler returns), that the request's stall hook is called once, at the
// stop, and that the result channel is closed behind what it holds.
func TestStallKeepsAPFSeatsAndCallsOnStall(t *testing.T) {
	for _, loop := range loops {
		t.Run(loopName(loop), func(t *testing.T) { testStallKeepsAPFSeats(t, loop) })
	}
}

func testStallKeepsAPFSeats(t *testing.T, loop Loop) {
	f := newFixtureLoop(t, 30*time.Second, objects("ns", 40, 1000, 100), loop)
	var stalls atomic.Int64
	var stallAt atomic.Int64
	cs := f.watch(WatchOptions{Namespace: "ns", SendInitialEvents: sendInitialEvents(true), AllowWatchBookmarks: true,
		OnStall: func() { stalls.Add(1); stallAt.Store(f.clock.Now().UnixNano()) }})
	start := f.clock.Now()
	f.step(30 * time.Second)
	if cs.inited.Load() != 0 {
		t.Error("a watcher stopped by the stall timeout counts as initialized: APF would release seats its handler still holds")
	}
	if n := stalls.Load(); n != 1 {
		t.Fatalf("OnStall called %d times, want 1", n)
	}
	if got := time.Unix(0, stallAt.Load()).Sub(start); got != 30*time.Second {
		t.Errorf("OnStall at %v after the watch, want 30s", got)
	}
	if n := cs.take(100); n != 10 {
		t.Errorf("took %d buffered events after the stop, want the 10 of the result channel", n)
	}
	if !cs.closed {
		t.Error("result channel not closed after a stop")
	}
}

// TestDispatcherClosesWatchers checks how the dispatcher ends a watcher
// whose input channel is full (cache_watcher.go add): outright when the
// watcher is streaming or waits for no bookmark, draining (its goroutine
// stays blocked on result) when it holds the bookmark its client waits for.
//
// Whether a watch-list watcher holds that bookmark depends on when the
// dispatcher's bookmark timer fires: every bookmarkPeriod (1.125 s), which
// on a clock stepped by whole seconds is every second second, as
// upstream's 1-1.25 s jitter is. A watcher started at 0 gets its bookmark
// at 2 s, not at 1 s: if its input fills before that, it is closed
// outright.
func TestDispatcherClosesWatchers(t *testing.T) {
	tests := []struct {
		name string
		opts WatchOptions
		// takeInitial reads the initial events first (and the bookmark).
		takeInitial bool
		// wait is how long the clock runs before the updates.
		wait      time.Duration
		wantPhase Phase
	}{{
		name:        "streaming watcher that stopped reading: closed, goroutine gone",
		opts:        WatchOptions{Namespace: "ns", SendInitialEvents: sendInitialEvents(true), AllowWatchBookmarks: true},
		takeInitial: true,
		wait:        2 * time.Second,
		wantPhase:   PhaseDone,
	}, {
		name:      "legacy resourceVersion=0 stuck in its initial events: closed, goroutine gone",
		opts:      WatchOptions{Namespace: "ns", ResourceVersion: "0"},
		wait:      2 * time.Second,
		wantPhase: PhaseDone,
	}, {
		name:      "watch-list stuck in its initial events holding its bookmark: drained, goroutine stays blocked",
		opts:      WatchOptions{Namespace: "ns", ResourceVersion: "0", SendInitialEvents: sendInitialEvents(true), AllowWatchBookmarks: true},
		wait:      2 * time.Second,
		wantPhase: PhaseInitial,
	}, {
		name:      "watch-list stuck in its initial events, overflowing before its first bookmark (at 2s): closed, goroutine gone",
		opts:      WatchOptions{Namespace: "ns", ResourceVersion: "0", SendInitialEvents: sendInitialEvents(true), AllowWatchBookmarks: true},
		wait:      time.Second,
		wantPhase: PhaseDone,
	}}
	for _, tt := range tests {
		for _, loop := range loops {
			t.Run(loopName(loop)+"/"+tt.name, func(t *testing.T) {
				objs := objects("ns", 40, 1000, 100)
				f := newFixtureLoop(t, 0, objs, loop)
				cs := f.watch(tt.opts)
				phaseBefore := PhaseInitial
				if tt.takeInitial {
					if n := cs.take(100); n != 41 {
						t.Fatalf("took %d initial events and bookmark, want 41", n)
					}
					phaseBefore = PhaseStreaming
				}
				f.step(tt.wait)
				// 10 fill result (streaming), 10 the input, the next one closes.
				for i := 0; i < 30 && cs.phase() == phaseBefore; i++ {
					f.update(objs[i])
					if f.c.Counters().TerminatedWatchers > 0 {
						break
					}
				}
				if got := f.c.Counters().TerminatedWatchers; got != 1 {
					t.Fatalf("TerminatedWatchers = %d, want 1", got)
				}
				f.step(time.Hour)
				if got := cs.phase(); got != tt.wantPhase {
					t.Errorf("phase after an hour = %s, want %s", got, tt.wantPhase)
				}
			})
		}
	}
}

// TestInitialEventsEndBookmark checks what a watch-list client gets: the
// initial events, then one bookmark annotated as their end, then changes;
// and that a legacy watch gets no such bookmark.
func TestInitialEventsEndBookmark(t *testing.T) {
	tests := []struct {
		name string
		opts WatchOptions
		want []string
	}{{
		name: "watch-list",
		opts: WatchOptions{SendInitialEvents: sendInitialEvents(true), AllowWatchBookmarks: true},
		want: []string{"ADDED ns/pod-0000", "ADDED ns/pod-0001", "BOOKMARK 101 end", "MODIFIED ns/pod-0000"},
	}, {
		name: "legacy resourceVersion=0",
		opts: WatchOptions{ResourceVersion: "0"},
		want: []string{"ADDED ns/pod-0000", "ADDED ns/pod-0001", "MODIFIED ns/pod-0000"},
	}, {
		name: "changes only",
		opts: WatchOptions{SendInitialEvents: sendInitialEvents(false)},
		want: []string{"MODIFIED ns/pod-0000"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := objects("ns", 2, 10, 100)
			f := newFixture(t, 0, objs)
			cs := f.watch(tt.opts)
			f.update(objs[0])
			cs.take(100)
			var got []string
			for _, ev := range cs.events {
				o := ev.Object.(*Object)
				if ev.Type == watch.Bookmark {
					s := "BOOKMARK " + strconv.FormatUint(o.ResourceVersion, 10)
					if o.InitialEventsEnd {
						s += " end"
					}
					got = append(got, s)
					continue
				}
				got = append(got, string(ev.Type)+" "+o.Namespace+"/"+o.Name)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPeriodicBookmarks checks that a streaming watcher that asked for
// bookmarks gets one a minute once the resource version moved past its
// start (cache_watcher.go:552 sends none at its own start version), and
// one that did not ask gets none.
func TestPeriodicBookmarks(t *testing.T) {
	for _, allow := range []bool{true, false} {
		objs := objects("ns", 2, 10, 100)
		f := newFixture(t, 0, objs)
		cs := f.watch(WatchOptions{SendInitialEvents: sendInitialEvents(false), AllowWatchBookmarks: allow})
		f.update(objs[0])
		for i := 0; i < 5*60; i++ {
			f.step(time.Second)
			cs.take(10)
		}
		bookmarks := 0
		for _, ev := range cs.events {
			if ev.Type == watch.Bookmark {
				bookmarks++
			}
		}
		want := 0
		if allow {
			want = 5
		}
		if bookmarks != want {
			t.Errorf("allowWatchBookmarks=%v: %d bookmarks in 5 minutes, want %d", allow, bookmarks, want)
		}
	}
}

// TestStopLocked checks the two ways a watcher ends: outright (input and
// done closed at once) and drained (input closed, done left open until
// the request's own Stop), and that stopping twice is harmless.
func TestStopLocked(t *testing.T) {
	for _, drain := range []bool{false, true} {
		w := &cacheWatcher{input: make(chan *watchCacheEvent, 1), done: make(chan struct{})}
		w.setDrainInputBufferLocked(drain)
		w.stopLocked()
		if !w.inputClosed.Load() {
			t.Errorf("drain=%v: input not closed", drain)
		}
		if got := isClosed(w.done); got == drain {
			t.Errorf("drain=%v: done closed = %v after the first stop", drain, got)
		}
		w.stopLocked() // the same mode again: nothing more to close
		w.setDrainInputBufferLocked(false)
		w.stopLocked() // the request's Stop
		if !isClosed(w.done) {
			t.Errorf("drain=%v: done still open after a stop without drain", drain)
		}
	}
}
