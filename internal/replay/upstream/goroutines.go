package upstream

import (
	"bytes"
	"context"
	"fmt"
	goruntime "runtime"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/watch-doctor/watch-doctor/internal/replay"
	"github.com/watch-doctor/watch-doctor/internal/watches"
	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

// relevant says whether a goroutine belongs to what the replay waits on:
// the cacher and its reflector, MemStore, the replay's handlers.
func relevant(g *stacks.Goroutine) bool {
	rel := func(f string) bool {
		return strings.HasPrefix(f, "k8s.io/apiserver/pkg/storage") ||
			strings.HasPrefix(f, "k8s.io/client-go/tools/cache") ||
			strings.HasPrefix(f, "github.com/watch-doctor/watch-doctor/internal/replay")
	}
	for _, f := range g.Frames {
		if rel(f.Func) {
			return true
		}
	}
	return rel(g.CreatedBy.Func)
}

// parkedStates are the goroutine states of a wait only another goroutine
// (or a timer) can end: channel operations and sync primitives. Every
// other state may end on its own: running, runnable, syscall, sleep,
// preempted, and the runtime's own waits such as "GC assist wait", in
// which a goroutine that allocates during a garbage collection pauses
// (under the race detector and a loaded machine, for long enough to span
// two dumps).
var parkedStates = map[string]bool{
	"chan receive":            true,
	"chan send":               true,
	"chan receive (nil chan)": true,
	"chan send (nil chan)":    true,
	"select":                  true,
	"select (no cases)":       true,
	"sync.Cond.Wait":          true,
	"sync.Mutex.Lock":         true,
	"sync.RWMutex.RLock":      true,
	"sync.RWMutex.Lock":       true,
	"sync.WaitGroup.Wait":     true,
	"semacquire":              true,
}

// busy reports whether a goroutine may still act without outside help.
func busy(g *stacks.Goroutine) bool {
	if !parkedStates[g.State] {
		return true
	}
	dispatcher, polling := false, false
	for _, f := range g.Frames {
		switch {
		// The dispatcher waiting out its real-time budget on a full watcher
		// (cache_watcher.go:224): it acts when the budget runs out.
		case strings.HasSuffix(f.Func, "cacher.(*cacheWatcher).add"):
			return true
		case strings.HasSuffix(f.Func, "cacher.(*Cacher).dispatchEvents"):
			dispatcher = true
		case strings.HasPrefix(f.Func, "k8s.io/apimachinery/pkg/util/wait."):
			polling = true
		}
	}
	// The dispatcher in its start-up poll for the first list's resource
	// version (cacher.go:915, every 10 ms of wall time): it enters its
	// loop, bookmark timer armed, without outside help.
	return dispatcher && polling
}

// settleTimeout bounds one Settle in wall time.
const settleTimeout = 30 * time.Second

// Settle implements replay.Backend by polling goroutine dumps until two in
// a row, a yield apart, show every relevant goroutine parked on a channel
// or a lock (parkedStates) and others() holds.
//
// This is a poll, not a wait on a signal: k8s.io/apiserver's goroutines
// publish nothing this package could wait on. It yields between the first
// dumps and then sleeps up to a millisecond between dumps, so as not to
// starve the goroutines it waits for on few cores, and gives up after
// settleTimeout of wall time with the goroutines still busy.
func (b *Backend) Settle(ctx context.Context, others func() bool) error {
	self := goroutineID()
	start := time.Now()
	quiet := 0
	for spins := 0; ; spins++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		view, last, err := b.read(self)
		if err != nil {
			return err
		}
		b.mu.Lock()
		b.lastView = view
		b.mu.Unlock()
		if len(last) == 0 && others() {
			quiet++
			if quiet == 2 {
				return nil
			}
			// Let the scheduler run what a dump cannot show as runnable
			// yet (a timer that expired during the dump) before the dump
			// that confirms.
			goruntime.Gosched()
			continue
		}
		quiet = 0
		if time.Since(start) > settleTimeout {
			why := strings.Join(last, "; ")
			if why == "" {
				why = "every cacher goroutine is parked, but a client's request handler is not"
			}
			return fmt.Errorf("the upstream cacher did not settle within %v: %s", settleTimeout, why)
		}
		if spins > 10 {
			time.Sleep(time.Duration(min(spins, 100)) * 10 * time.Microsecond)
		} else {
			goruntime.Gosched()
		}
	}
}

// read dumps this process's goroutines and returns its watchers and the
// relevant goroutines still busy, other than self's. A dump byte for byte
// the same as the last one read (the dump that confirms a settle mostly
// is: 4,233 of the 11,052 of TestReplayFromSeedReproBundle) is not read
// again: its goroutines, states and stacks are those already read.
func (b *Backend) read(self int64) (*replay.DumpView, []string, error) {
	dump := b.dumper.Dump()
	if b.last.view != nil && bytes.Equal(dump, b.last.dump) {
		return b.last.view, b.last.busy, nil
	}
	view := &replay.DumpView{Watchers: map[int64]replay.WatcherGoroutine{}}
	var busyOnes []string
	// The same route from a dump to watchers as analyze
	// (watches.ReadDump, watches.WatcherOf), on this process's own dump.
	if _, err := watches.ReadDump(bytes.NewReader(dump), watches.ReadOptions{Each: func(g *stacks.Goroutine) error {
		if w, ok := watches.WatcherOf(g); ok {
			view.Watchers[g.ParentID] = replay.WatcherGoroutine{ID: w.GoroutineID, ParentID: g.ParentID, Phase: string(w.Phase), Blocked: w.Blocked, State: w.State}
		}
		if g.ID != self && relevant(g) && busy(g) {
			busyOnes = append(busyOnes, fmt.Sprintf("goroutine %d [%s] in %s", g.ID, g.State, stacks.TopFunc(g.Frames)))
		}
		return nil
	}}); err != nil {
		b.last = lastDump{}
		return nil, nil, fmt.Errorf("reading this process's goroutine dump: %w", err)
	}
	// The dump names its caller first ("goroutine N [running]"), so the
	// same bytes mean the same self.
	b.last = lastDump{dump: append(b.last.dump[:0], dump...), view: view, busy: busyOnes}
	return view, busyOnes, nil
}

// lastDump is the last dump Settle read, and what it found there.
type lastDump struct {
	dump []byte
	view *replay.DumpView
	busy []string
}

// Alive implements replay.Backend from the last settled dump.
func (b *Backend) Alive(w watch.Interface) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	p, ok := b.parents[w]
	if !ok || b.lastView == nil {
		return false
	}
	_, alive := b.lastView.Watchers[p]
	return alive
}

// BlockedNow implements replay.Backend from the last settled dump.
func (b *Backend) BlockedNow() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.lastView == nil {
		return 0
	}
	n := 0
	for _, p := range b.parents {
		if wg, ok := b.lastView.Watchers[p]; ok && wg.Blocked {
			n++
		}
	}
	return n
}

// Dump implements replay.Backend.
func (b *Backend) Dump() ([]byte, func(string) string, error) {
	d, err := replay.GoroutineDump()
	return d, nil, err
}

// goroutineID returns the calling goroutine's id.
func goroutineID() int64 { return replay.GoroutineID() }
