package replay

import (
	"bytes"
	"fmt"
	"runtime"
	"runtime/pprof"
	"strings"

	"github.com/watch-doctor/watch-doctor/internal/watches"
	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

// WatcherGoroutine is one cacheWatcher goroutine as the analyzer read it
// from a goroutine dump. A plain value.
type WatcherGoroutine struct {
	ID       int64
	ParentID int64
	// Phase is "initial" (processInterval) or "streaming" (process).
	Phase string
	// Blocked: parked in sendWatchCacheEvent, its result channel full.
	Blocked bool
	State   string
}

// DumpView is what a replay reads from one goroutine dump of its own
// process: the watcher goroutines, keyed by the goroutine that started
// them (the replay's handler), and every goroutine's state for the
// quiescence checks of backends that cannot count their own. Not modified
// after ClassifyDump returns it.
type DumpView struct {
	Watchers   map[int64]WatcherGoroutine
	Goroutines []*stacks.Goroutine
}

// GoroutineDump writes the process's goroutines as
// /debug/pprof/goroutine?debug=2 serves them
// (runtime/pprof.Lookup("goroutine").WriteTo(w, 2)).
func GoroutineDump() ([]byte, error) {
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 2); err != nil {
		return nil, fmt.Errorf("dumping goroutines: %w", err)
	}
	return buf.Bytes(), nil
}

// StackDumper takes goroutine dumps again and again into one buffer: the
// same text as GoroutineDump (pprof's debug=2 is runtime.Stack of all
// goroutines), without pprof's fresh megabyte per call. For loops that poll
// the process's goroutines. Not safe for concurrent use.
type StackDumper struct{ buf []byte }

// Dump returns the dump; it is valid until the next call.
func (d *StackDumper) Dump() []byte {
	if d.buf == nil {
		d.buf = make([]byte, 256<<10)
	}
	for {
		n := runtime.Stack(d.buf, true)
		if n < len(d.buf) {
			return d.buf[:n]
		}
		d.buf = make([]byte, 2*len(d.buf))
	}
}

// RenameOurCacher maps this repository's cacher package onto upstream's, so
// that the analyzer, which knows kube-apiserver's function names, classifies
// a dump of internal/cacher the way it classifies one of k8s.io/apiserver: the
// functions carry upstream's names, only the package path differs.
func RenameOurCacher(fn string) string {
	const ours = "github.com/watch-doctor/watch-doctor/internal/cacher."
	if strings.HasPrefix(fn, ours) {
		return "k8s.io/apiserver/pkg/storage/cacher." + fn[len(ours):]
	}
	return fn
}

// ClassifyDump reads a debug=2 dump with watch-doctor's own analyzer
// (pkg/stacks and internal/watches: the tool diagnosing itself). rename maps
// function names before classification; keep says which goroutines to keep
// in full in the view (nil keeps none).
//
// The driver reads every column's end-of-replay dump here (observeEnd).
// The upstream column's Settle reads its own process's dumps on the same
// route (watches.ReadDump, then watches.WatcherOf per goroutine), each
// goroutine as it is read, to poll until the cacher is quiet
// (upstream/goroutines.go).
func ClassifyDump(dump []byte, rename func(string) string, keep func(*stacks.Goroutine) bool) (*DumpView, error) {
	parents := map[int64]int64{}
	view := &DumpView{Watchers: map[int64]WatcherGoroutine{}}
	d, err := watches.ReadDump(bytes.NewReader(dump), watches.ReadOptions{AllArgs: true, Rename: rename, Each: func(g *stacks.Goroutine) error {
		parents[g.ID] = g.ParentID
		if keep != nil && keep(g) {
			view.Goroutines = append(view.Goroutines, g.Clone())
		}
		return nil
	}})
	if err != nil {
		return nil, fmt.Errorf("reading goroutine dump: %w", err)
	}
	for _, w := range d.Watchers {
		p := parents[w.GoroutineID]
		view.Watchers[p] = WatcherGoroutine{
			ID:       w.GoroutineID,
			ParentID: p,
			Phase:    string(w.Phase),
			Blocked:  w.Blocked,
			State:    w.State,
		}
	}
	return view, nil
}
