package cacher

import (
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"
)

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

// TestBookmarkBuckets: a watcher is popped in the first pop after its
// one-second bucket is due, once; buckets come out earliest first.
func TestBookmarkBuckets(t *testing.T) {
	clk := testingclock.NewFakeClock(epoch)
	b := newBookmarkBuckets(clk, time.Minute)
	w1, w2, w3 := &cacheWatcher{}, &cacheWatcher{}, &cacheWatcher{}
	b.buckets[2] = []*cacheWatcher{w2}
	b.buckets[1] = []*cacheWatcher{w1}
	b.buckets[5] = []*cacheWatcher{w3}
	if got := b.popExpiredLocked(); len(got) != 0 {
		t.Errorf("at 0s popped %d", len(got))
	}
	clk.Step(2500 * time.Millisecond)
	if got := b.popExpiredLocked(); len(got) != 2 || got[0] != w1 || got[1] != w2 {
		t.Errorf("at 2.5s popped %v, want w1 then w2", got)
	}
	if got := b.popExpiredLocked(); len(got) != 0 {
		t.Errorf("popped %d twice", len(got))
	}
	clk.Step(10 * time.Second)
	if got := b.popExpiredLocked(); len(got) != 1 || got[0] != w3 || len(b.buckets) != 0 {
		t.Errorf("at 12.5s popped %v, buckets left %v", got, b.buckets)
	}
}
