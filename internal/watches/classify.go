package watches

import (
	"strings"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

// Function names, matched through CanonicalFunc so that vendored and
// forked builds ("k8s.io/kubernetes/vendor/k8s.io/apiserver/...") are
// recognised too. Sources are k8s.io/apiserver v0.37.2 and golang.org/x/net v0.57.0.
const (
	// cacher.go:688 starts the watcher with `go watcher.processInterval(...)`.
	fnProcessInterval = "k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).processInterval"
	// cache_watcher.go:542, the streaming loop processInterval ends in.
	fnProcess = "k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).process"
	// cache_watcher.go:441, the select on c.result <- event / <-c.done.
	fnSendWatchCacheEvent = "k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).sendWatchCacheEvent"
	fnCacherWatch         = "k8s.io/apiserver/pkg/storage/cacher.(*Cacher).Watch"

	// watch.go:362 (v0.37.2); ServeHTTP before it was renamed.
	fnHandleHTTP      = "k8s.io/apiserver/pkg/endpoints/handlers.(*WatchServer).HandleHTTP"
	fnWatchServeHTTP  = "k8s.io/apiserver/pkg/endpoints/handlers.(*WatchServer).ServeHTTP"
	fnWatchHandleWS   = "k8s.io/apiserver/pkg/endpoints/handlers.(*WatchServer).HandleWS"
	fnWriteDataFromH  = "golang.org/x/net/http2.(*serverConn).writeDataFromHandler"
	fnBundledWriteDFH = "net/http.(*http2serverConn).writeDataFromHandler"

	// apf_context.go:92, the APF goroutine waiting for WatchInitialized.
	fnInitSignalWait = "k8s.io/apiserver/pkg/util/flowcontrol.(*initializationSignal).Wait"
	fnAPFHandle      = "k8s.io/apiserver/pkg/server/filters.(*priorityAndFairnessHandler).Handle"

	fnH2ServeConn      = "golang.org/x/net/http2.(*serverConn).serve"
	fnBundledServeConn = "net/http.(*http2serverConn).serve"
	fnH1ConnServe      = "net/http.(*conn).serve"
	fnScheduleHandler  = "golang.org/x/net/http2.(*serverConn).scheduleHandler"
	fnBundledSchedule  = "net/http.(*http2serverConn).scheduleHandler"
)

// entryFunc is the function a goroutine started in: its outermost frame,
// skipping the runtime.goexit frame dumps show at GOTRACEBACK=system and
// above (runtime/traceback.go prints it when showing runtime frames).
func entryFunc(frames []stacks.Frame) string {
	for i := len(frames) - 1; i >= 0; i-- {
		if frames[i].Func != "runtime.goexit" {
			return frames[i].Func
		}
	}
	return ""
}

// is reports whether fn is name, possibly under the vendor or staging-tree
// prefix of another build (CanonicalFunc). The suffix test first keeps the
// common mismatch to one comparison.
func is(fn, name string) bool {
	return fn == name || (len(fn) > len(name) && strings.HasSuffix(fn, name) && CanonicalFunc(fn) == name)
}

// goroutineRef is the compact part of a goroutine the diagnosis keeps.
type goroutineRef struct {
	ID          int64
	State       string
	WaitMinutes int
	ParentID    int64
}

// watcherG is a cacheWatcher goroutine as read from the dump.
type watcherG struct {
	goroutineRef
	Phase  api.Phase
	InSend bool // sendWatchCacheEvent is the innermost non-runtime frame
	// Receiver and Event are the arguments of sendWatchCacheEvent: the
	// *cacheWatcher and the *watchCacheEvent being sent.
	Receiver, Event string
}

// keepArgs names the frames whose arguments the diagnosis reads: pass it
// as stacks.Scanner.KeepArgs with SkipArgs set (ReadDump does).
func keepArgs(fn string) bool {
	switch {
	case is(fn, fnSendWatchCacheEvent), is(fn, fnDoEncode),
		is(fn, fnRecorderWrite), is(fn, fnFramerWrite), is(fn, fnWatchRWWrite), is(fn, fnGzipRWWrite), is(fn, fnPlainRWWrite), is(fn, fnGzipWrite),
		is(fn, fnWriteDataFromH), is(fn, fnBundledWriteDFH), is(fn, fnH1ConnServe):
		return true
	}
	return false
}

type handlerG struct {
	goroutineRef
	Block api.HandlerBlock
	// ConnID is the goroutine serving the client connection: the http2
	// serverConn.serve goroutine that scheduled the handler, or the
	// handler itself on HTTP/1.1 (net/http.(*conn).serve runs handlers
	// inline).
	ConnID int64
	// ObjectType, Transport, EventBytes and ConnAddress: see Handler.
	ObjectType, Transport string
	EventBytes            int
	ConnAddress           string
}

// Collector classifies the goroutines of one debug=2 dump as they stream
// by, keeping only watch-related ones and counters. Not safe for
// concurrent use.
type Collector struct {
	watchers []watcherG
	handlers map[int64]handlerG
	apf      map[int64]goroutineRef // keyed by the handler (parent) id
	// waiting are handlers waiting for a watch cache (notready.go).
	waiting []handlerG
	conns   map[int64]bool
	// connWatches counts the watch handlers of each connection (set by
	// Dump).
	connWatches map[int64]int

	total      int
	maxID      int64
	byState    map[string]int
	byTopFunc  map[string]int
	topFuncMax int
	// apiServer is set once a goroutine runs k8s.io/apiserver code.
	apiServer bool
}

// NewCollector returns an empty Collector.
func NewCollector() *Collector {
	return &Collector{
		handlers:   map[int64]handlerG{},
		apf:        map[int64]goroutineRef{},
		conns:      map[int64]bool{},
		byState:    map[string]int{},
		byTopFunc:  map[string]int{},
		topFuncMax: 10000,
	}
}

// Add classifies one goroutine. g may be reused by the caller afterwards.
func (c *Collector) Add(g *stacks.Goroutine) {
	c.total++
	c.maxID = max(c.maxID, g.ID)
	c.byState[g.State]++
	top := stacks.TopFunc(g.Frames)
	// One map operation while there is room for new functions.
	if len(c.byTopFunc) < c.topFuncMax {
		c.byTopFunc[top]++
	} else if n, ok := c.byTopFunc[top]; ok {
		c.byTopFunc[top] = n + 1
	}
	if !c.apiServer {
		c.apiServer = hasAPIServerFrame(g.Frames)
	}
	ref := goroutineRef{ID: g.ID, State: g.State, WaitMinutes: g.WaitMinutes, ParentID: g.ParentID}
	if len(g.Frames) == 0 {
		return
	}
	entry := entryFunc(g.Frames)
	switch {
	case isWatcherGoroutine(g):
		c.watchers = append(c.watchers, classifyWatcher(ref, g.Frames))
		return
	case is(g.CreatedBy.Func, fnAPFHandle) && is(top, fnInitSignalWait):
		c.apf[g.ParentID] = ref
		return
	case waitsForCache(top, g.Frames):
		c.waiting = append(c.waiting, c.cacheWaiter(ref, g))
		return
	}
	// Handlers and connections: HTTP/1.1 handlers run on the connection
	// goroutine, HTTP/2 handlers on a goroutine the connection scheduled.
	h2handler := is(g.CreatedBy.Func, fnScheduleHandler) || is(g.CreatedBy.Func, fnBundledSchedule)
	isConn := is(entry, fnH1ConnServe)
	if !h2handler && !isConn {
		return
	}
	watchAt := -1
	for i, f := range g.Frames {
		if isWatchServe(f.Func) {
			watchAt = i
			break
		}
		if isConn && (is(f.Func, fnH2ServeConn) || is(f.Func, fnBundledServeConn)) {
			c.conns[g.ID] = true
			return
		}
	}
	if watchAt < 0 {
		return
	}
	h := handlerG{goroutineRef: ref, Block: api.HandlerOther, ObjectType: objectType(g.Frames[:watchAt]), Transport: handlerTransport(g.Frames[watchAt:], h2handler),
		EventBytes: eventBytes(g.Frames[:watchAt]), ConnAddress: connAddress(g.Frames)}
	switch {
	case blockedWriting(g.Frames[:watchAt], g.State):
		h.Block = api.HandlerClientNotReading
	case top == g.Frames[watchAt].Func && isWaitState(g.State):
		h.Block = api.HandlerWaitingForEvents
	}
	if h2handler {
		h.ConnID = g.ParentID
	} else {
		h.ConnID = g.ID
		c.conns[g.ID] = true
	}
	c.handlers[g.ID] = h
}

// isWatcherGoroutine reports whether g is a cacheWatcher goroutine: started
// at processInterval (cacher.go:688), or, in releases that started the
// streaming loop directly, at process by (*Cacher).Watch.
func isWatcherGoroutine(g *stacks.Goroutine) bool {
	entry := entryFunc(g.Frames)
	return is(entry, fnProcessInterval) || (is(entry, fnProcess) && is(g.CreatedBy.Func, fnCacherWatch))
}

// WatcherOf classifies one goroutine as the Collector does, for callers
// that look at goroutines one by one (the replay watching the upstream
// cacher). The Handler and APF goroutine are not linked: that needs the
// whole dump (Collector). ok is false for any other goroutine.
func WatcherOf(g *stacks.Goroutine) (w api.Watcher, ok bool) {
	if !isWatcherGoroutine(g) {
		return api.Watcher{}, false
	}
	return classifyWatcher(goroutineRef{ID: g.ID, State: g.State, WaitMinutes: g.WaitMinutes, ParentID: g.ParentID}, g.Frames).watcher(), true
}

// watcher is the unlinked Watcher of a classified goroutine.
func (wg watcherG) watcher() api.Watcher {
	return api.Watcher{
		GoroutineID: wg.ID, Phase: wg.Phase, InSend: wg.InSend,
		Blocked: wg.InSend && isWaitState(wg.State), State: wg.State, WaitMinutes: wg.WaitMinutes,
		CacheWatcher: wg.Receiver, Event: wg.Event,
	}
}

// isWatchServe reports whether fn is the watch handler's serving loop.
func isWatchServe(fn string) bool {
	return is(fn, fnHandleHTTP) || is(fn, fnWatchServeHTTP) || is(fn, fnWatchHandleWS)
}

// blockedWriting reports whether a watch handler, given the frames above
// its serving loop, is blocked writing to its client: in http2
// writeDataFromHandler (the stream's flow-control window is full), or on
// HTTP/1.1 and websockets parked in a socket write. state is "" for
// aggregated dumps, which carry none.
func blockedWriting(above []stacks.Frame, state string) bool {
	if top := stacks.TopFunc(above); is(top, fnWriteDataFromH) || is(top, fnBundledWriteDFH) {
		return true
	}
	if state != "" && state != "IO wait" {
		return false
	}
	for _, f := range above {
		if f.Func == "net.(*conn).Write" || f.Func == "crypto/tls.(*Conn).Write" {
			return true
		}
	}
	return false
}

func classifyWatcher(ref goroutineRef, frames []stacks.Frame) watcherG {
	w := watcherG{goroutineRef: ref, Phase: api.PhaseInitial}
	for _, f := range frames {
		if is(f.Func, fnProcess) {
			w.Phase = api.PhaseStreaming
			break
		}
	}
	for _, f := range frames {
		if is(f.Func, fnSendWatchCacheEvent) {
			w.InSend = is(stacks.TopFunc(frames), fnSendWatchCacheEvent)
			w.Receiver, w.Event = twoArgs(f.Args)
			break
		}
	}
	return w
}

// twoArgs returns the first two words of a frame's argument text
// ("0x24b5d9022270, 0x24b5dce786e0"); pointers the runtime could only
// guess at are printed with a trailing '?' and are dropped.
func twoArgs(args string) (a, b string) {
	first, rest, _ := strings.Cut(args, ", ")
	second, _, _ := strings.Cut(rest, ", ")
	clean := func(s string) string {
		if !strings.HasPrefix(s, "0x") || strings.HasSuffix(s, "?") {
			return ""
		}
		return s
	}
	return clean(first), clean(second)
}

// isWaitState reports whether a goroutine state means parked (as opposed
// to running or runnable).
func isWaitState(state string) bool {
	switch state {
	case "running", "runnable", "syscall", "":
		return false
	}
	return true
}

// frameKind is what a stack alone says a goroutine is.
type frameKind int

const (
	frameOther frameKind = iota
	frameWatcher
	frameHandler
	frameAPFWait
)

// frameClass is the classification of a stack alone.
type frameClass struct {
	kind    frameKind
	watcher watcherG         // frameWatcher: phase and InSend
	block   api.HandlerBlock // frameHandler
}

// classifyFrames classifies a goroutine from its frames alone, with the
// Collector's frame rules, for evidence that has no creator, parent or
// state per goroutine (execution traces: watches.ReadTrace). Without the
// creator, a watcher is one that started at processInterval, and an APF
// wait one parked in (*initializationSignal).Wait.
func classifyFrames(frames []stacks.Frame) frameClass {
	if len(frames) == 0 {
		return frameClass{}
	}
	if is(entryFunc(frames), fnProcessInterval) {
		return frameClass{kind: frameWatcher, watcher: classifyWatcher(goroutineRef{}, frames)}
	}
	top := stacks.TopFunc(frames)
	if is(top, fnInitSignalWait) {
		return frameClass{kind: frameAPFWait}
	}
	for i, f := range frames {
		if !isWatchServe(f.Func) {
			continue
		}
		c := frameClass{kind: frameHandler, block: api.HandlerOther}
		switch {
		case blockedWriting(frames[:i], ""):
			c.block = api.HandlerClientNotReading
		case top == f.Func:
			c.block = api.HandlerWaitingForEvents
		}
		return c
	}
	return frameClass{}
}
