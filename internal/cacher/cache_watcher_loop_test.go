package cacher

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestStallAfterGracefulClose is the patched server on a busy resource: a
// watch-list watcher stuck in its initial events holding its bookmark is
// closed gracefully by the dispatcher when its input fills (done stays
// open, it stays blocked sending), and the stall timeout still stops it
// StallTimeout after its last send, without counting it as initialized.
// Measured the same on real patched v1.37.2 and v1.38.0-beta.0 servers
// (test/e2e TestPatchedBlockedReplay).
func TestStallAfterGracefulClose(t *testing.T) {
	for _, loop := range loops {
		t.Run(loopName(loop), func(t *testing.T) {
			objs := objects("ns", 40, 1000, 100)
			f := newFixtureLoop(t, 30*time.Second, objs, loop)
			start := f.clock.Now()
			cs := f.watch(WatchOptions{Namespace: "ns", ResourceVersion: "0", SendInitialEvents: sendInitialEvents(true), AllowWatchBookmarks: true})
			f.step(2 * time.Second)
			for i := 0; i < 30 && f.c.Counters().TerminatedWatchers == 0; i++ {
				f.update(objs[i])
			}
			if got := f.c.Counters().TerminatedWatchers; got != 1 {
				t.Fatalf("TerminatedWatchers = %d, want 1", got)
			}
			if got := cs.phase(); got != PhaseInitial {
				t.Fatalf("phase after the graceful close = %s, want %s (blocked sending)", got, PhaseInitial)
			}
			var stalledAt time.Duration
			for f.clock.Now().Sub(start) < time.Minute && stalledAt == 0 {
				f.step(time.Second)
				if cs.w.Info().Stalled {
					stalledAt = f.clock.Now().Sub(start)
				}
			}
			if stalledAt != 30*time.Second || cs.phase() != PhaseDone {
				t.Errorf("stopped by the stall timeout at %v (phase %s), want at 30s, done", stalledAt, cs.phase())
			}
			if cs.inited.Load() != 0 {
				t.Error("the stalled watcher counts as initialized: APF would release seats its handler still holds")
			}
		})
	}
}

// TestLoopShapes checks that a watcher stuck in its initial events shows
// its release's frames in a goroutine dump: sendWatchCacheEvent called by
// processInterval (v1.37 loop), or by processInitialEvents called by
// process (v1.38), which is what internal/watches reads each release by.
func TestLoopShapes(t *testing.T) {
	want := map[Loop][]string{
		LoopInterval: {"(*cacheWatcher).sendWatchCacheEvent(", "(*cacheWatcher).processInterval("},
		LoopInput:    {"(*cacheWatcher).sendWatchCacheEvent(", "(*cacheWatcher).processInitialEvents(", "(*cacheWatcher).process("},
	}
	for _, loop := range loops {
		t.Run(loopName(loop), func(t *testing.T) {
			f := newFixtureLoop(t, 0, objects("ns", 40, 1000, 100), loop)
			f.watch(WatchOptions{Namespace: "ns", SendInitialEvents: sendInitialEvents(true)})
			dump, _ := allStacks(nil)
			var found string
			for _, g := range strings.Split(string(dump), "\n\n") {
				// Parked in the send: not a watcher of an earlier subtest
				// still on its way out (its done is closed).
				header, rest, _ := strings.Cut(g, "\n")
				if strings.Contains(header, "[select") && strings.Contains(rest, "(*cacheWatcher).sendWatchCacheEvent(") {
					found = g
				}
			}
			var frames []string
			for _, line := range strings.Split(found, "\n") {
				const m = "(*cacheWatcher)."
				i := strings.Index(line, m)
				if i < 0 || strings.HasPrefix(line, "created by") {
					continue
				}
				name := line[i:]
				frames = append(frames, name[:len(m)+strings.IndexByte(name[len(m):], '(')+1])
			}
			if diff := cmp.Diff(want[loop], frames); diff != "" {
				t.Errorf("frames of the stuck watcher (-want +got):\n%s\n%s", diff, found)
			}
		})
	}
}
