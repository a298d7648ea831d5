package v1alpha1

// Phase is where a cacheWatcher goroutine is in its life.
type Phase string

const (
	// PhaseInitial: replaying initial events in processInterval
	// (sendInitialEvents=true or resourceVersion=0), before WatchInitialized.
	PhaseInitial Phase = "initial"
	// PhaseStreaming: in process, forwarding new events.
	PhaseStreaming Phase = "streaming"
)

// HandlerBlock is what the watch handler goroutine is doing.
type HandlerBlock string

const (
	// HandlerClientNotReading: blocked in http2 writeDataFromHandler, the
	// client's flow-control window is full: it stopped reading.
	HandlerClientNotReading HandlerBlock = "client-not-reading"
	// HandlerWaitingForEvents: in the HandleHTTP select, waiting for the
	// watcher's next event: the client keeps up.
	HandlerWaitingForEvents HandlerBlock = "waiting-for-events"
	// HandlerOther: anywhere else (encoding, running).
	HandlerOther HandlerBlock = "other"
	// HandlerNotFound: the parent goroutine is not in the dump.
	HandlerNotFound HandlerBlock = "not-found"
)

// PhaseClosed is the phase of a HeldAfterWatcherClosed finding: the
// watcher's goroutine is gone, its handler is not.
const PhaseClosed Phase = "closed"

// PhaseWaitingForCache is the phase of a WaitingForWatchCache finding: the
// request waits in (*Cacher).Watch, before its watcher exists.
const PhaseWaitingForCache Phase = "waiting-for-cache"

// PhaseRelist is the phase of a WatchClosedByServer finding: the server
// closed the client's watch, and the client watches again from the
// start, its initial events replayed each time.
const PhaseRelist Phase = "relist"

// Watcher is one cacheWatcher goroutine, linked to the goroutines that
// serve the same watch request.
type Watcher struct {
	GoroutineID int64 `json:"goroutineID"`
	Phase       Phase `json:"phase"`
	// InSend: sendWatchCacheEvent is the innermost frame, so the goroutine
	// is in the select on c.result <- event (cache_watcher.go:441).
	InSend bool `json:"inSend"`
	// Blocked: InSend and parked (not running): the result channel is full.
	Blocked     bool   `json:"blocked"`
	State       string `json:"state"`
	WaitMinutes int    `json:"waitMinutes,omitempty"`
	// CacheWatcher and Event are the addresses sendWatchCacheEvent was
	// called with (the *cacheWatcher and the *watchCacheEvent being sent),
	// when the dump printed them. A watcher blocked on the same event in
	// two samples sent nothing in between: the event stays referenced
	// while it waits, so its address cannot be reused.
	CacheWatcher string `json:"cacheWatcher,omitempty"`
	Event        string `json:"event,omitempty"`
	// Handler is the request's handler goroutine (the parent that ran
	// (*Cacher).Watch); nil when the dump does not name parents or the
	// parent is not in it.
	Handler *Handler `json:"handler,omitempty"`
	// APFGoroutineID is the goroutine in (*initializationSignal).Wait
	// created by the same handler: the request's APF seats are held until
	// it returns. 0 when there is none.
	APFGoroutineID int64 `json:"apfGoroutineID,omitempty"`
	// Loop is the watcher loop's function that the goroutine is in
	// ("processInterval" up to v1.37, "processInitialEvents" from v1.38,
	// "process" streaming), for messages; "" when unknown. Not written.
	Loop string `json:"-"`
}

// Handler is the goroutine running a watch request's HTTP handler.
type Handler struct {
	GoroutineID int64        `json:"goroutineID"`
	State       string       `json:"state"`
	WaitMinutes int          `json:"waitMinutes,omitempty"`
	Block       HandlerBlock `json:"block"`
	// ConnGoroutineID is the goroutine serving the client connection;
	// watches with the same one share a TCP connection.
	ConnGoroutineID int64 `json:"connGoroutineID,omitempty"`
	// ConnInDump is false when that goroutine is not in the dump.
	ConnInDump bool `json:"connInDump"`
	// ObjectType is the itab word of the object the handler is encoding
	// ((*watchEncoder).doEncode), "" when it is not encoding: one word per
	// concrete type within a process, so handlers serving the same
	// group/resource show the same word.
	ObjectType string `json:"objectType,omitempty"`
	// Transport is http2, http/1.1 or websocket.
	Transport string `json:"transport,omitempty"`
	// EventBytes is the size of the event the handler is writing, when a
	// writer below doEncode printed it; 0 otherwise.
	EventBytes int `json:"eventBytes,omitempty"`
	// ConnAddress is the connection's address (*serverConn for HTTP/2,
	// *conn for HTTP/1.1) when the handler's frames print it.
	ConnAddress string `json:"connAddress,omitempty"`
	// ConnWatches counts the watch handlers in the dump served over the
	// same connection (this one included): one client process, or a proxy
	// in front of the API server.
	ConnWatches int `json:"connWatches,omitempty"`
}

// GoroutineIDs lists the goroutines the watch keeps alive: the watcher,
// its handler and its APF goroutine.
func (w Watcher) GoroutineIDs() []int64 {
	ids := []int64{w.GoroutineID}
	if w.Handler != nil {
		ids = append(ids, w.Handler.GoroutineID)
	}
	if w.APFGoroutineID != 0 {
		ids = append(ids, w.APFGoroutineID)
	}
	return ids
}

// PhaseCount counts watchers of an aggregated dump by phase and by
// whether they sit in sendWatchCacheEvent.
type PhaseCount struct {
	Phase  Phase `json:"phase"`
	InSend bool  `json:"inSend"`
	Count  int   `json:"count"`
}
