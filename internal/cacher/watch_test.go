package cacher

import (
	"context"
	"strings"
	"testing"
)

// TestWatchRefuses: a resource version that is not a number, one past the
// cache's, and a stopped cacher are errors, as upstream answers them.
func TestWatchRefuses(t *testing.T) {
	tests := []struct {
		name string
		opts WatchOptions
		stop bool
		want string
	}{
		{name: "not a number", opts: WatchOptions{ResourceVersion: "abc"}, want: `invalid resource version "abc"`},
		{name: "negative", opts: WatchOptions{ResourceVersion: "-1"}, want: `invalid resource version "-1"`},
		{name: "too large", opts: WatchOptions{ResourceVersion: "11"}, want: "too large resource version: 11, current: 10"},
		{name: "stopped", opts: WatchOptions{ResourceVersion: "0"}, stop: true, want: `cacher of "pods" is stopped`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, 0, objects("ns", 10, 100, 1))
			if tt.stop {
				f.c.Stop()
			}
			w, err := f.c.Watch(context.Background(), tt.opts)
			if err == nil {
				w.Stop()
				t.Fatalf("Watch(%+v) succeeded, want an error containing %q", tt.opts, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Watch(%+v) error = %q, want it to contain %q", tt.opts, err, tt.want)
			}
		})
	}
}

// TestWatchInfo: a new watch of the whole resource starts in the initial
// phase with channels of the history's size, and has sent its replay once
// read.
func TestWatchInfo(t *testing.T) {
	f := newFixture(t, 0, objects("ns", 3, 100, 1))
	cs := f.watch(WatchOptions{ResourceVersion: "0"})
	if got := cs.take(3); got != 3 {
		t.Fatalf("took %d events, want 3", got)
	}
	info := cs.w.Info()
	if info.Sent != 3 || info.ChanSize != f.c.watchCache.chanSize(f.c.indexedTrigger) || info.Stalled || info.Terminated {
		t.Errorf("Info() = %+v, want 3 sent, ChanSize %d, neither stalled nor terminated", info, f.c.watchCache.chanSize(f.c.indexedTrigger))
	}
}
