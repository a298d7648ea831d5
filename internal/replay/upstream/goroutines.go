package upstream

import (
	"strings"

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
