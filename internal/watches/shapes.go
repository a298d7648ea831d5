package watches

// What the classifier knows of each kube-apiserver release: the functions
// of k8s.io/apiserver it reads goroutines by, one table per release, each
// row citing the line of that release's source (in the Go module cache,
// k8s.io/apiserver@VERSION) that grounds the reading. TestShapeContract
// (shapes_test.go) downloads every release below through its own
// go.mod (hack/shapes/v1.N) and checks that each row's function is declared
// in the file named and that the cited line holds the text quoted. The
// classifier's roles (roleByName) are the union of the tables: a name means
// the same in every release that has it.

// role is what the classifier reads a frame's function as.
type role uint8

const (
	roleNone role = iota
	// roleIntervalLoop: (*cacheWatcher).processInterval, where a watcher
	// goroutine starts up to v1.37; it replays the initial events and then
	// calls process.
	roleIntervalLoop
	// roleWatcherLoop: (*cacheWatcher).process. Up to v1.37 it is the
	// streaming loop processInterval ends in; from v1.38 it is where the
	// watcher goroutine starts, and it streams unless it is under
	// processInitialEvents.
	roleWatcherLoop
	// roleInitialEvents: (*cacheWatcher).processInitialEvents (v1.38),
	// the initial-events replay called from process.
	roleInitialEvents
	// roleSend: (*cacheWatcher).sendWatchCacheEvent, the select on
	// c.result <- event / <-c.done.
	roleSend
	// roleCacherWatch: (*Cacher).Watch, which starts the watcher goroutine.
	roleCacherWatch
	// roleWatchServe: the watch handler's serving loop.
	roleWatchServe
	// roleInitSignalWait: the APF goroutine holding the request's seats
	// until WatchInitialized.
	roleInitSignalWait
	// roleAPFHandle: the APF filter that starts that goroutine.
	roleAPFHandle
	// roleDoEncode: the watch encoder, whose argument is the object.
	roleDoEncode
	// roleEventWriter: a writer the encoded event passes through unchanged
	// below doEncode; roleFramerWrite the protobuf framer, which adds a
	// header of its own.
	roleEventWriter
	roleFramerWrite
	// roleWriteData: HTTP/2 writeDataFromHandler (the stream's window is
	// full when a handler parks there).
	roleWriteData
	// roleH2ServeConn, roleH1ConnServe, roleScheduleHandler: connection
	// goroutines and the HTTP/2 handler's creator.
	roleH2ServeConn
	roleH1ConnServe
	roleScheduleHandler
	// roleReadyWait: the cacher's ready state, where a watch waits for its
	// watch cache; roleWaitFresh the wait for a fresh enough cache.
	roleReadyWait
	roleWaitFresh
)

// upstreamRow is one function the classifier relies on in one release of
// k8s.io/apiserver.
type upstreamRow struct {
	// Func is the function as a module build of kube-apiserver names it
	// in a goroutine dump.
	Func string
	Role role
	// Decl is the file of the module declaring Func.
	Decl string
	// Cite is the line grounding the reading, "file:line", and Holds text
	// that line holds (a call, a select case, the declaration).
	Cite, Holds string
}

// release is what the classifier knows of one kube-apiserver release.
type release struct {
	// Kube is the kube-apiserver release, APIServer its k8s.io/apiserver
	// module version.
	Kube, APIServer string
	// Proven: a real capture of this release is diagnosed in make test
	// (docs/versions.md). A release known from its source alone is read
	// with its table, but is not proven.
	Proven bool
	Rows   []upstreamRow
}

// Function names of k8s.io/apiserver (module builds; CanonicalFunc maps
// vendored and forked builds onto them).
const (
	fnProcessInterval       = "k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).processInterval"
	fnProcess               = "k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).process"
	fnProcessInitialEvents  = "k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).processInitialEvents"
	fnSendWatchCacheEvent   = "k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).sendWatchCacheEvent"
	fnCacherWatch           = "k8s.io/apiserver/pkg/storage/cacher.(*Cacher).Watch"
	fnReadyWait             = "k8s.io/apiserver/pkg/storage/cacher.(*ready).wait"
	fnReadyWaitGen          = "k8s.io/apiserver/pkg/storage/cacher.(*ready).waitAndReadGeneration"
	fnWaitFreshLocked       = "k8s.io/apiserver/pkg/storage/cacher.(*watchCache).waitUntilFreshLocked"
	fnHandleHTTP            = "k8s.io/apiserver/pkg/endpoints/handlers.(*WatchServer).HandleHTTP"
	fnWatchHandleWS         = "k8s.io/apiserver/pkg/endpoints/handlers.(*WatchServer).HandleWS"
	fnDoEncode              = "k8s.io/apiserver/pkg/endpoints/handlers.(*watchEncoder).doEncode"
	fnRecorderWrite         = "k8s.io/apiserver/pkg/endpoints/handlers.(*watchEventMetricsRecorder).Write"
	fnWatchRWWrite          = "k8s.io/apiserver/pkg/endpoints/handlers.(*watchResponseWriter).Write"
	fnGzipRWWrite           = "k8s.io/apiserver/pkg/endpoints/handlers.(*perFlushGzipWriter).Write"
	fnPlainRWWrite          = "k8s.io/apiserver/pkg/endpoints/handlers.(*plainResponseWriter).Write"
	fnInitSignalWait        = "k8s.io/apiserver/pkg/util/flowcontrol.(*initializationSignal).Wait"
	fnAPFHandle             = "k8s.io/apiserver/pkg/server/filters.(*priorityAndFairnessHandler).Handle"
	fileCacher              = "pkg/storage/cacher/cacher.go"
	fileCacheWatcher        = "pkg/storage/cacher/cache_watcher.go"
	fileReady               = "pkg/storage/cacher/ready.go"
	fileWatchCache          = "pkg/storage/cacher/watch_cache.go"
	fileWatch               = "pkg/endpoints/handlers/watch.go"
	fileResponse            = "pkg/endpoints/handlers/response.go"
	fileAPFContext          = "pkg/util/flowcontrol/apf_context.go"
	filePriorityAndFairness = "pkg/server/filters/priority-and-fairness.go"
)

// Rows every release from v1.34 to v1.38 shares at the same lines.
var (
	rowInitSignalWait = upstreamRow{fnInitSignalWait, roleInitSignalWait, fileAPFContext, fileAPFContext + ":91", "func (i *initializationSignal) Wait()"}
	rowAPFHandle      = upstreamRow{fnAPFHandle, roleAPFHandle, filePriorityAndFairness, filePriorityAndFairness + ":218", "watchInitializationSignal.Wait()"}
	rowReadyWait      = upstreamRow{fnReadyWait, roleReadyWait, fileReady, fileReady + ":74", "func (r *ready) wait(ctx context.Context) error"}
	rowReadyWaitGen   = upstreamRow{fnReadyWaitGen, roleReadyWait, fileReady, fileReady + ":81", "func (r *ready) waitAndReadGeneration(ctx context.Context) (int, error)"}
)

// intervalLoop is the watcher loop of v1.34 to v1.37: (*Cacher).Watch
// starts `go watcher.processInterval(...)` (at, in cacher.go), which
// replays the interval, each event through sendWatchCacheEvent (send, in
// cache_watcher.go), signals WatchInitialized and calls process
// (processCall): a watcher is in its initial phase until process is on its
// stack. blocked is the line of `case c.result <- *watchEvent:`.
func intervalLoop(at, send, processCall, blocked string) []upstreamRow {
	return []upstreamRow{
		{fnCacherWatch, roleCacherWatch, fileCacher, fileCacher + ":" + at, "go watcher.processInterval("},
		{fnProcessInterval, roleIntervalLoop, fileCacheWatcher, fileCacheWatcher + ":" + send, "c.sendWatchCacheEvent(event)"},
		{fnProcess, roleWatcherLoop, fileCacheWatcher, fileCacheWatcher + ":" + processCall, "c.process(ctx, resourceVersion)"},
		{fnSendWatchCacheEvent, roleSend, fileCacheWatcher, fileCacheWatcher + ":" + blocked, "case c.result <- *watchEvent:"},
	}
}

// handlerRows are the watch handler's functions; recorder is the line
// declaring (*watchEventMetricsRecorder).Write.
func handlerRows(handle, ws, encode, recorder string) []upstreamRow {
	return []upstreamRow{
		{fnHandleHTTP, roleWatchServe, fileWatch, fileWatch + ":" + handle, "func (s *WatchServer) HandleHTTP("},
		{fnWatchHandleWS, roleWatchServe, fileWatch, fileWatch + ":" + ws, "func (s *WatchServer) HandleWS("},
		{fnDoEncode, roleDoEncode, fileResponse, fileResponse + ":" + encode, "func (e *watchEncoder) doEncode(obj runtime.Object, event watch.Event, w io.Writer) error"},
		{fnRecorderWrite, roleEventWriter, fileWatch, fileWatch + ":" + recorder, "func (c *watchEventMetricsRecorder) Write(p []byte)"},
	}
}

// watchListWriters are the writers v1.37 put below the recorder for
// watch-list streams (watch.go:258, 280, 348; gzip per flush at :337).
var watchListWriters = []upstreamRow{
	{fnPlainRWWrite, roleEventWriter, fileWatch, fileWatch + ":258", "func (p *plainResponseWriter) Write(b []byte)"},
	{fnGzipRWWrite, roleEventWriter, fileWatch, fileWatch + ":280", "func (p *perFlushGzipWriter) Write(b []byte)"},
	{fnWatchRWWrite, roleEventWriter, fileWatch, fileWatch + ":348", "func (w *watchResponseWriter) Write(p []byte)"},
}

// rows joins row groups into one table.
func rows(groups ...[]upstreamRow) []upstreamRow {
	var out []upstreamRow
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// common are the rows v1.34 to v1.38 share at the same lines.
var common = []upstreamRow{rowInitSignalWait, rowAPFHandle, rowReadyWait, rowReadyWaitGen}

// releases are the kube-apiserver releases the classifier knows, oldest
// first. Lines: k8s.io/apiserver@VERSION in the module cache.
var releases = []release{
	{Kube: "v1.34.4", APIServer: "v0.34.4", Proven: true, Rows: rows(
		intervalLoop("654", "488", "517", "430"), handlerRows("234", "320", "183", "220"), common)},
	{Kube: "v1.35.4", APIServer: "v0.35.4", Proven: true, Rows: rows(
		intervalLoop("674", "488", "517", "430"), handlerRows("232", "318", "183", "218"), common)},
	{Kube: "v1.36.3", APIServer: "v0.36.3", Proven: true, Rows: rows(
		intervalLoop("689", "488", "517", "430"), handlerRows("241", "350", "183", "227"), common)},
	{Kube: "v1.37.2", APIServer: "v0.37.2", Proven: true, Rows: rows(
		intervalLoop("688", "502", "531", "442"), handlerRows("362", "484", "183", "231"), watchListWriters, common,
		[]upstreamRow{
			{fnWaitFreshLocked, roleWaitFresh, fileWatchCache, fileWatchCache + ":318", "func (w *watchCache) waitUntilFreshLocked("},
		})},
	// v1.38 (upstream PR 141449) starts the watcher at process, which reads
	// the interval from c.input and replays it in processInitialEvents;
	// WatchInitialized is signalled in process after it returns
	// (cache_watcher.go:504). A stuck watcher reads, innermost first:
	// sendWatchCacheEvent (:463, the select) <- processInitialEvents-range1
	// (:585) <- (*lazySnapshotCacheIntervalSource).All.func1-range1
	// (watch_cache_interval.go:270) <- the btree iteration (k8s.io/utils'
	// forked btree) <- processInitialEvents (:554) <- process (:494), as
	// the real capture in testdata/kube-apiserver-v1.38.0-beta.0 shows.
	{Kube: "v1.38.0-beta.0", APIServer: "v0.38.0-beta.0", Proven: true, Rows: rows(
		[]upstreamRow{
			{fnCacherWatch, roleCacherWatch, fileCacher, fileCacher + ":561", "go watcher.process(ctx)"},
			{fnProcess, roleWatcherLoop, fileCacheWatcher, fileCacheWatcher + ":494", "c.processInitialEvents(item.interval)"},
			{fnProcessInitialEvents, roleInitialEvents, fileCacheWatcher, fileCacheWatcher + ":585", "c.sendWatchCacheEvent(event)"},
			{fnSendWatchCacheEvent, roleSend, fileCacheWatcher, fileCacheWatcher + ":464", "case c.result <- *watchEvent:"},
			{fnWaitFreshLocked, roleWaitFresh, fileWatchCache, fileWatchCache + ":308", "func (w *watchCache) waitUntilFreshLocked("},
		},
		handlerRows("362", "481", "192", "231"), watchListWriters, common)},
}

// Functions outside k8s.io/apiserver the classifier reads, not checked per
// release: golang.org/x/net v0.57.0 (and the copy net/http bundles up to
// Go 1.26; Go 1.27, which builds v1.38, moved it to the package
// net/http/internal/http2: server.go:757 serve, :1002 writeDataFromHandler
// with its select at :1015, :2250 scheduleHandler in go1.27.3),
// k8s.io/apimachinery's framer (framer.go:46), compress/gzip, and names of
// releases before v1.34 (WatchServer.ServeHTTP, renamed HandleHTTP).
const (
	fnWatchServeHTTP   = "k8s.io/apiserver/pkg/endpoints/handlers.(*WatchServer).ServeHTTP"
	fnFramerWrite      = "k8s.io/apimachinery/pkg/util/framer.(*lengthDelimitedFrameWriter).Write"
	fnGzipWrite        = "compress/gzip.(*Writer).Write"
	fnWriteDataFromH   = "golang.org/x/net/http2.(*serverConn).writeDataFromHandler"
	fnBundledWriteDFH  = "net/http.(*http2serverConn).writeDataFromHandler"
	fnH2ServeConn      = "golang.org/x/net/http2.(*serverConn).serve"
	fnBundledServeConn = "net/http.(*http2serverConn).serve"
	fnH1ConnServe      = "net/http.(*conn).serve"
	fnScheduleHandler  = "golang.org/x/net/http2.(*serverConn).scheduleHandler"
	fnBundledSchedule  = "net/http.(*http2serverConn).scheduleHandler"
	fnGo127WriteDFH    = "net/http/internal/http2.(*serverConn).writeDataFromHandler"
	fnGo127ServeConn   = "net/http/internal/http2.(*serverConn).serve"
	fnGo127Schedule    = "net/http/internal/http2.(*serverConn).scheduleHandler"
)

var otherFuncs = map[string]role{
	fnWatchServeHTTP:   roleWatchServe,
	fnFramerWrite:      roleFramerWrite,
	fnGzipWrite:        roleEventWriter,
	fnWriteDataFromH:   roleWriteData,
	fnBundledWriteDFH:  roleWriteData,
	fnH2ServeConn:      roleH2ServeConn,
	fnBundledServeConn: roleH2ServeConn,
	fnH1ConnServe:      roleH1ConnServe,
	fnScheduleHandler:  roleScheduleHandler,
	fnBundledSchedule:  roleScheduleHandler,
	fnGo127WriteDFH:    roleWriteData,
	fnGo127ServeConn:   roleH2ServeConn,
	fnGo127Schedule:    roleScheduleHandler,
}

// roleByName is the role of every function the tables name, module-build
// names only.
var roleByName = func() map[string]role {
	m := make(map[string]role, 48)
	for fn, r := range otherFuncs {
		m[fn] = r
	}
	for _, rel := range releases {
		for _, row := range rel.Rows {
			m[row.Func] = row.Role
		}
	}
	return m
}()

// newestProven is the newest of rels (oldest first) proven on a real
// capture.
func newestProven(rels []release) release {
	for i := len(rels) - 1; i >= 0; i-- {
		if rels[i].Proven {
			return rels[i]
		}
	}
	return rels[0]
}
