package watches

import (
	"strings"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

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
	// Loop is the watcher loop's function it is in (api.Watcher.Loop).
	Loop string
}

// keepArgs names the frames whose arguments the diagnosis reads: pass it
// as stacks.Scanner.KeepArgs with SkipArgs set (ReadDump does).
func keepArgs(fn string) bool { return keepArgsRole(roleOf(fn)) }

// keepArgsRole is keepArgs by role.
func keepArgsRole(r role) bool {
	switch r {
	case roleSend, roleDoEncode, roleEventWriter, roleFramerWrite, roleWriteData, roleH1ConnServe:
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

	total int
	maxID int64
	// byState and byTopFunc count goroutines per state and per top
	// function (at most 10,000 functions).
	byState, byTopFunc tally
	// apiServer is set once a goroutine runs k8s.io/apiserver code.
	apiServer bool
	// names decides each function name once; roles is the buffer of the
	// goroutine being classified.
	names names
	roles []role
	// unrecognised counts, per parent (handler) id, the goroutines
	// (*Cacher).Watch created that are not watchers of a shape this build
	// knows: a release's watcher loop it does not recognise.
	unrecognised map[int64]int
}

// NewCollector returns an empty Collector.
func NewCollector() *Collector {
	return &Collector{
		handlers:     map[int64]handlerG{},
		unrecognised: map[int64]int{},
		apf:          map[int64]goroutineRef{},
		conns:        map[int64]bool{},
		byTopFunc:    tally{max: 10000},
	}
}

// Add classifies one goroutine, rewriting its function names to their
// module-build form (CanonicalFunc). g may be reused by the caller
// afterwards.
func (c *Collector) Add(g *stacks.Goroutine) {
	st := c.names.resolve(g, c.roles)
	c.roles = st.roles
	c.total++
	c.maxID = max(c.maxID, g.ID)
	c.byState.add(g.State)
	c.byTopFunc.add(stacks.TopFunc(g.Frames))
	// Decided once per name (resolve), as hasAPIServerFrame would.
	c.apiServer = c.apiServer || st.apiServer
	if len(g.Frames) == 0 {
		return
	}
	ref := goroutineRef{ID: g.ID, State: g.State, WaitMinutes: g.WaitMinutes, ParentID: g.ParentID}
	switch {
	case st.isWatcher():
		c.watchers = append(c.watchers, classifyWatcher(ref, st))
		return
	case st.created == roleAPFHandle && st.topRole() == roleInitSignalWait:
		c.apf[g.ParentID] = ref
		return
	case waitsForCache(st):
		c.waiting = append(c.waiting, c.cacheWaiter(ref, g, st))
		return
	case st.created == roleCacherWatch:
		// Fail closed: a goroutine the cacher started for a watch is
		// its watcher, whatever its frames are named.
		c.unrecognised[g.ParentID]++
		return
	}
	c.addHandler(ref, g, st)
}

// addHandler keeps a watch handler or a connection goroutine: HTTP/1.1
// handlers run on the connection goroutine, HTTP/2 handlers on a goroutine
// the connection scheduled.
func (c *Collector) addHandler(ref goroutineRef, g *stacks.Goroutine, st stack) {
	h2handler := st.created == roleScheduleHandler
	isConn := st.entryRole() == roleH1ConnServe
	if !h2handler && !isConn {
		return
	}
	watchAt := -1
	for i, r := range st.roles {
		if r == roleWatchServe {
			watchAt = i
			break
		}
		if isConn && r == roleH2ServeConn {
			c.conns[g.ID] = true
			return
		}
	}
	if watchAt < 0 {
		return
	}
	above := st.sub(watchAt)
	h := handlerG{goroutineRef: ref, Block: api.HandlerOther, ObjectType: objectType(above), Transport: handlerTransport(st, h2handler),
		EventBytes: eventBytes(above), ConnAddress: connAddress(st)}
	switch {
	case blockedWriting(above, g.State):
		h.Block = api.HandlerClientNotReading
	case st.top() == watchAt && isWaitState(g.State):
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

// isWatcher reports whether s is a cacheWatcher goroutine's stack: started
// at processInterval (v1.34-v1.37: cacher.go:688 in v0.37.2), or at process
// by (*Cacher).Watch (v1.38: cacher.go:561 in v0.38.0-beta.0, and releases
// before processInterval). Profiles and traces name no creator, and a
// process entry is taken as it is.
func (s stack) isWatcher() bool {
	switch s.entryRole() {
	case roleIntervalLoop:
		return true
	case roleWatcherLoop:
		return !s.hasCreator || s.created == roleCacherWatch
	}
	return false
}

// WatcherOf classifies one goroutine as the Collector does, for callers
// that look at goroutines one by one (the replay watching the upstream
// cacher). The Handler and APF goroutine are not linked: that needs the
// whole dump (Collector). ok is false for any other goroutine.
func WatcherOf(g *stacks.Goroutine) (w api.Watcher, ok bool) {
	st := oneStack(g)
	if !st.isWatcher() {
		return api.Watcher{}, false
	}
	return classifyWatcher(goroutineRef{ID: g.ID, State: g.State, WaitMinutes: g.WaitMinutes, ParentID: g.ParentID}, st).watcher(), true
}

// watcher is the unlinked Watcher of a classified goroutine.
func (wg watcherG) watcher() api.Watcher {
	return api.Watcher{
		GoroutineID: wg.ID, Phase: wg.Phase, InSend: wg.InSend,
		Blocked: wg.InSend && isWaitState(wg.State), State: wg.State, WaitMinutes: wg.WaitMinutes,
		CacheWatcher: wg.Receiver, Event: wg.Event, Loop: wg.Loop,
	}
}

// blockedWriting reports whether a watch handler, given the frames above
// its serving loop, is blocked writing to its client: in http2
// writeDataFromHandler (the stream's flow-control window is full), or on
// HTTP/1.1 and websockets parked in a socket write. state is "" for
// aggregated dumps, which carry none.
func blockedWriting(above stack, state string) bool {
	if above.topRole() == roleWriteData {
		return true
	}
	if state != "" && state != "IO wait" {
		return false
	}
	for _, f := range above.frames {
		if f.Func == "net.(*conn).Write" || f.Func == "crypto/tls.(*Conn).Write" {
			return true
		}
	}
	return false
}

// classifyWatcher reads a watcher goroutine's phase and send. It is in
// its initial phase under processInitialEvents (v1.38: process calls it at
// cache_watcher.go:494 and signals WatchInitialized after it returns,
// :504), or before processInterval called process (v1.34-v1.37: :531 in
// v0.37.2, after WatchInitialized); streaming otherwise.
func classifyWatcher(ref goroutineRef, st stack) watcherG {
	w := watcherG{goroutineRef: ref, Phase: api.PhaseStreaming, Loop: "process"}
	_, replaying := st.has(roleInitialEvents)
	_, streaming := st.has(roleWatcherLoop)
	switch {
	case replaying:
		w.Phase, w.Loop = api.PhaseInitial, "processInitialEvents"
	case !streaming:
		w.Phase, w.Loop = api.PhaseInitial, "processInterval"
	}
	if i, ok := st.has(roleSend); ok {
		w.InSend = st.topRole() == roleSend
		w.Receiver, w.Event = twoArgs(st.frames[i].Args)
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
// creator, a watcher is one that started at processInterval or process,
// and an APF wait one parked in (*initializationSignal).Wait.
func classifyFrames(st stack) frameClass {
	if len(st.frames) == 0 {
		return frameClass{}
	}
	if st.isWatcher() {
		return frameClass{kind: frameWatcher, watcher: classifyWatcher(goroutineRef{}, st)}
	}
	if st.topRole() == roleInitSignalWait {
		return frameClass{kind: frameAPFWait}
	}
	i, ok := st.has(roleWatchServe)
	if !ok {
		return frameClass{}
	}
	c := frameClass{kind: frameHandler, block: api.HandlerOther}
	switch {
	case blockedWriting(st.sub(i), ""):
		c.block = api.HandlerClientNotReading
	case st.top() == i:
		c.block = api.HandlerWaitingForEvents
	}
	return c
}
