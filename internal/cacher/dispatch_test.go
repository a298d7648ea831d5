package cacher

import (
	"testing"
	"time"
)

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
		t.Run(tt.name, func(t *testing.T) {
			objs := objects("ns", 40, 1000, 100)
			f := newFixture(t, 0, objs)
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

// TestBookmarkCadence checks when a watch-list watcher gets the bookmark
// it waits for on a clock stepped in ticks: at the first tick at or after
// each 1.125 s period, the period restarting at the tick it fired on. Those
// are the ticks upstream's 1-1.25 s jittered timer fires on for any draw,
// for every tick below whose multiples none falls strictly between 1 s and
// 1.25 s.
func TestBookmarkCadence(t *testing.T) {
	tests := []struct {
		tick time.Duration
		// start is how long the clock runs before the watch starts.
		start time.Duration
		want  time.Duration // when the bookmark reached the input
	}{
		{tick: time.Second, want: 2 * time.Second},
		{tick: time.Second, start: time.Second, want: 2 * time.Second},
		{tick: time.Second, start: 2 * time.Second, want: 4 * time.Second},
		{tick: time.Second, start: 3 * time.Second, want: 4 * time.Second},
		{tick: 500 * time.Millisecond, want: 1500 * time.Millisecond},
		{tick: 500 * time.Millisecond, start: 1500 * time.Millisecond, want: 3 * time.Second},
		{tick: 250 * time.Millisecond, want: 1250 * time.Millisecond},
		{tick: 2 * time.Second, want: 2 * time.Second},
	}
	for _, tt := range tests {
		f := newFixture(t, 0, objects("ns", 40, 1000, 100))
		for f.clock.Since(epoch) < tt.start {
			f.advance(tt.tick)
		}
		cs := f.watch(WatchOptions{Namespace: "ns", SendInitialEvents: sendInitialEvents(true), AllowWatchBookmarks: true})
		var got time.Duration
		for got == 0 && f.clock.Since(epoch) < 10*time.Second {
			f.advance(tt.tick)
			if cs.w.(*cacheWatcher).wasBookmarkAfterRvReceived() {
				got = f.clock.Since(epoch)
			}
		}
		if got != tt.want {
			t.Errorf("tick %v, watch started at %v: bookmark at %v, want %v", tt.tick, tt.start, got, tt.want)
		}
	}
}
