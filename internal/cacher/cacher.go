package cacher

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"

	"github.com/watch-doctor/watch-doctor/internal/cacher/park"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// incomingBufferSize is the dispatcher's queue (upstream cacher.go:407).
const incomingBufferSize = 100

// bookmarkPeriod is how often the dispatcher hands due watchers a bookmark.
// Upstream draws each wait anew from [1s, 1.25s) (wait.Jitter(time.Second,
// 0.25), cacher.go:906 and :948); this is the middle of that range. On a
// clock stepped in ticks, upstream's timer fires at the first tick at or
// after the draw, and re-arms from there: with 1 s ticks at every second
// second, whatever the draw. Whenever no multiple of the tick falls strictly
// between 1 s and 1.25 s (ticks of 250 ms, 500 ms, 1 s, 2 s...), every draw
// gives the same tick, and so does 1.125 s; with other ticks (100 ms,
// 300 ms...) upstream itself is not deterministic.
const bookmarkPeriod = 1125 * time.Millisecond

// ErrBackpressure is returned by Apply when the dispatcher's queue is full.
// Upstream the reflector blocks there; a driver on a fake clock settles the
// cache (which may mean stepping the budget clock to the budget deadline)
// and applies again.
var ErrBackpressure = errors.New("dispatcher queue full")

// ErrStopped is returned by Apply once the Cacher is stopped: its
// dispatcher takes nothing any more, so retrying is pointless.
var ErrStopped = errors.New("cacher stopped")

// Config configures a Cacher. A plain value.
type Config struct {
	// Resource names the cached resource in counters and messages, e.g.
	// "pods".
	Resource string
	// Clock drives every timer and timestamp but the dispatcher's budget; a
	// fake clock makes an hour of replay take milliseconds. Default: the
	// real clock.
	Clock clock.WithTicker
	// BudgetClock drives the dispatcher's time budget and its timer
	// (time_budget.go): how long the dispatcher waits for a watcher whose
	// input is full. Upstream measures it on the real clock
	// (time_budget.go:62) while everything else runs on Clock, so waiting
	// out the budget takes no time on Clock. Default: the real clock.
	BudgetClock clock.WithTicker
	// IndexedTrigger names the field upstream's IndexerFuncs index watchers
	// by (kube-apiserver's pods: "spec.nodeName"); "" for none. It only
	// changes channel sizes here: a watch of a resource with a trigger that
	// does not select on it (every watch of this package, which has no field
	// selectors) gets up to 1000 slots instead of 100
	// (watch_cache_history.go:173-211).
	IndexedTrigger string
	// EventsHistoryWindow is the history's freshness window, at least
	// DefaultEventFreshDuration (the default).
	EventsHistoryWindow time.Duration
	// StallTimeout is the patch of kubernetes PR 141899: in the initial
	// phase, a watcher whose send to its result channel makes no progress
	// for this long is stopped. 0 keeps upstream behaviour.
	StallTimeout time.Duration
	// Loop is the watcher loop of the release modelled: LoopInterval
	// (v1.34 to v1.37, the default) or LoopInput (v1.38).
	Loop Loop
	// Initial is the state the cache starts from (the reflector's first
	// list), at InitialResourceVersion.
	Initial                []*Object
	InitialResourceVersion uint64
}

// Loop is the shape of a watcher goroutine, which differs between
// kube-apiserver releases.
type Loop int

const (
	// LoopInterval: (*Cacher).Watch starts processInterval, which replays
	// the interval and then calls process (upstream v0.34 to v0.37;
	// v0.37.2 cacher.go:688, cache_watcher.go:450-560).
	LoopInterval Loop = iota
	// LoopInput: (*Cacher).Watch starts process, which takes the interval
	// from the watcher's input and replays it in processInitialEvents
	// before it streams (upstream PR 141449, v0.38.0-beta.0 cacher.go:561,
	// cache_watcher.go:478-612).
	LoopInput
)

// WatchOptions are the parts of a watch request the cache looks at
// (upstream storage.ListOptions plus the request context). A plain value;
// the functions and the counter it points to must be safe for concurrent
// use.
type WatchOptions struct {
	// Namespace scopes the watch; "" watches the whole resource.
	Namespace string
	// ResourceVersion is the request's resourceVersion: "" (unset), "0" or
	// a number.
	ResourceVersion string
	// SendInitialEvents is the request's sendInitialEvents, nil when unset.
	SendInitialEvents *bool
	// AllowWatchBookmarks is the request's allowWatchBookmarks.
	AllowWatchBookmarks bool
	// OnInitialized is called once when the watch counts as initialized
	// for API Priority and Fairness (upstream: utilflowcontrol.WatchInitialized
	// at the start of process); the request's seats are held until then.
	OnInitialized func()
	// OnStall, when set, is called once from the watcher goroutine when
	// StallTimeout stops the watcher, before its result channel closes: the
	// request's stall hook. kubernetes PR 141899 has none (its handler is
	// not told and stays blocked writing); watch-doctor's complete fix
	// (test/e2e/patches) ends the response stream through it.
	OnStall func()
	// Received, when set, is incremented by the consumer after every
	// receive from the result channel. Quiescent needs it to be exact.
	Received *atomic.Int64
}

// Watch is what Cacher.Watch returns: a watch.Interface plus what a replay
// reads about it from outside.
type Watch interface {
	watch.Interface
	// Info describes the watcher now.
	Info() WatchInfo
}

// WatchInfo describes one watcher at one instant. A plain value.
type WatchInfo struct {
	Phase Phase
	// Sent counts events put into the result channel.
	Sent int64
	// LastSend is the clock time of the last successful send (or of the
	// start of the initial phase).
	LastSend time.Time
	// Stalled: stopped by StallTimeout.
	Stalled bool
	// Terminated: forgotten by the dispatcher because its input was full.
	Terminated bool
	// ChanSize is the capacity of the input and result channels.
	ChanSize int
}

// counters are atomics: safe for concurrent use.
type counters struct {
	terminated, stalled, initEvents atomic.Int64
}

// watcherSet is the watchers of one scope in registration order, so that
// dispatch order is deterministic. Guarded by the Cacher lock.
type watcherSet struct {
	list []*cacheWatcher
	pos  map[*cacheWatcher]int
}

func (s *watcherSet) add(w *cacheWatcher) {
	s.pos[w] = len(s.list)
	s.list = append(s.list, w)
}

func (s *watcherSet) remove(w *cacheWatcher) {
	i, ok := s.pos[w]
	if !ok {
		return
	}
	copy(s.list[i:], s.list[i+1:])
	s.list = s.list[:len(s.list)-1]
	delete(s.pos, w)
	for j := i; j < len(s.list); j++ {
		s.pos[s.list[j]] = j
	}
}

// Cacher serves watches of one resource from a watchCache (upstream
// Cacher, cacher.go:264). Apply feeds it the resource's changes in order;
// a dispatcher goroutine hands each to the watchers whose scope it touches.
//
// Thread safety: Watch, Counters, Quiescent, BudgetDeadline,
// BlockedWatchers and Stop are safe for concurrent use; Apply is meant for
// one caller (see there). The embedded lock guards the watcher index, the
// bookmark buckets and the dispatching state (methods ending in Locked);
// applyMu serializes Apply; the dispatcher goroutine owns lastProcessedRV
// and the dispatch buffers; liveMu guards live.
type Cacher struct {
	sync.Mutex

	resource       string
	clock          clock.WithTicker
	budgetClock    clock.WithTicker
	stallTimeout   time.Duration
	loop           Loop
	indexedTrigger bool
	watchCache     *watchCache
	budget         *timeBudget
	counters       counters

	applyMu  sync.Mutex
	incoming chan *watchCacheEvent
	injected atomic.Int64
	consumed atomic.Int64

	watchers        map[string]*watcherSet // by namespace, "" for cluster scope
	bookmarks       *bookmarkBuckets
	dispatching     bool
	watchersToStop  []*cacheWatcher
	expiredBookmark []*cacheWatcher

	// dispatcher-owned
	lastProcessedRV uint64
	watchersBuffer  []*cacheWatcher
	blockedWatchers []*cacheWatcher
	dispatchPark    park.Spot[cacheWatcher]

	liveMu sync.Mutex
	live   []*cacheWatcher

	stopOnce sync.Once
	stopCh   chan struct{}
	wg       sync.WaitGroup
}

// New starts a Cacher holding cfg.Initial and its dispatcher goroutine.
func New(cfg Config) (*Cacher, error) {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.BudgetClock == nil {
		cfg.BudgetClock = clock.RealClock{}
	}
	if cfg.EventsHistoryWindow == 0 {
		cfg.EventsHistoryWindow = DefaultEventFreshDuration
	}
	if cfg.EventsHistoryWindow < DefaultEventFreshDuration {
		return nil, fmt.Errorf("events history window %v must not be below %v", cfg.EventsHistoryWindow, DefaultEventFreshDuration)
	}
	if cfg.StallTimeout < 0 {
		return nil, fmt.Errorf("stall timeout %v must not be negative", cfg.StallTimeout)
	}
	if cfg.Loop != LoopInterval && cfg.Loop != LoopInput {
		return nil, fmt.Errorf("unknown watcher loop %d", cfg.Loop)
	}
	c := &Cacher{
		resource:        cfg.Resource,
		clock:           cfg.Clock,
		budgetClock:     cfg.BudgetClock,
		stallTimeout:    cfg.StallTimeout,
		loop:            cfg.Loop,
		indexedTrigger:  cfg.IndexedTrigger != "",
		watchCache:      newWatchCache(cfg.Clock, cfg.EventsHistoryWindow),
		budget:          newTimeBudget(cfg.BudgetClock),
		incoming:        make(chan *watchCacheEvent, incomingBufferSize),
		watchers:        map[string]*watcherSet{},
		bookmarks:       newBookmarkBuckets(cfg.Clock, defaultBookmarkFrequency),
		lastProcessedRV: cfg.InitialResourceVersion,
		stopCh:          make(chan struct{}),
	}
	c.watchCache.replace(cfg.Initial, cfg.InitialResourceVersion)
	c.wg.Add(1)
	go c.dispatchEvents()
	return c, nil
}

// Apply records one change of the resource and queues it for dispatch
// (upstream watchCache.processEvent then Cacher.processEvent,
// watch_cache.go:211 and cacher.go:896). It does not block: with the queue
// full it returns ErrBackpressure and changes nothing; once the Cacher is
// stopped it returns ErrStopped.
//
// Apply is meant for a single caller, like upstream's reflector: changes
// must come in resource version order, which only one producer can
// guarantee. A lock serializes calls all the same, so that two callers can
// neither both find the last free slot of the queue and block the second
// one, nor interleave the recording and the queueing of their changes.
func (c *Cacher) Apply(t watch.EventType, o *Object) error {
	c.applyMu.Lock()
	defer c.applyMu.Unlock()
	select {
	case <-c.stopCh:
		return ErrStopped
	default:
	}
	// Only Apply sends on incoming, under applyMu: room now is room at the
	// send below.
	if len(c.incoming) == cap(c.incoming) {
		return ErrBackpressure
	}
	e, err := c.watchCache.processEvent(t, o)
	if err != nil {
		return err
	}
	c.injected.Add(1)
	c.incoming <- e
	return nil
}

// Counters returns the counters now.
func (c *Cacher) Counters() api.Counters {
	return api.Counters{
		Resource:           c.resource,
		TerminatedWatchers: c.counters.terminated.Load(),
		StalledWatchers:    c.counters.stalled.Load(),
		InitEvents:         c.counters.initEvents.Load(),
	}
}

// Watch starts a watch (upstream Cacher.Watch, cacher.go:516-690). The
// watcher's goroutine is started by the calling goroutine, as upstream's is
// by the request handler's, so a goroutine dump links the two.
func (c *Cacher) Watch(ctx context.Context, opts WatchOptions) (Watch, error) {
	requestedRV, err := parseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return nil, err
	}
	select {
	case <-c.stopCh:
		return nil, fmt.Errorf("cacher of %q is stopped", c.resource)
	default:
	}
	listWatch := opts.SendInitialEvents != nil && *opts.SendInitialEvents && opts.AllowWatchBookmarks
	// getWatchCacheResourceVersion (cacher.go:1313-1323): the storage's
	// current resource version is the cache's here, which is always fresh.
	requiredRV := requestedRV
	if opts.ResourceVersion == "" && opts.SendInitialEvents != nil {
		requiredRV = c.watchCache.resourceVersion()
	}
	deadline, _ := ctx.Deadline()
	chanSize := c.watchCache.chanSize(c.indexedTrigger)
	ns := opts.Namespace
	w := &cacheWatcher{
		input:               make(chan *watchCacheEvent, chanSize),
		result:              make(chan watch.Event, chanSize),
		done:                make(chan struct{}),
		ctx:                 ctx,
		filter:              func(o *Object) bool { return ns == "" || o.Namespace == ns },
		deadline:            deadline,
		allowWatchBookmarks: opts.AllowWatchBookmarks,
		clock:               c.clock,
		stallTimeout:        c.stallTimeout,
		onInitialized:       opts.OnInitialized,
		onStall:             opts.OnStall,
		counters:            &c.counters,
		received:            opts.Received,
		exitHook:            c.removeLive,
	}
	w.phase.Store(PhaseInitial)

	c.watchCache.RLock()
	defer c.watchCache.RUnlock()
	if requiredRV > c.watchCache.rv {
		// What a client reads in the 504 upstream answers (storage
		// NewTooLargeResourceVersionError), deliberately the same words.
		return nil, fmt.Errorf("too large resource version: %d, current: %d", requiredRV, c.watchCache.rv)
	}
	iv, err := c.watchCache.intervalLocked(requiredRV, opts.SendInitialEvents)
	if err != nil {
		return nil, err
	}
	if listWatch {
		iv.endBookmark = &watchCacheEvent{Type: watch.Bookmark, ResourceVersion: c.watchCache.rv}
	}
	w.iv.Store(iv)

	c.Lock()
	w.forget = c.forgetWatcher(w, ns)
	// getBookmarkAfterResourceVersionLockedFunc (cacher.go:1281-1295).
	switch {
	case !listWatch:
		w.setBookmarkAfterResourceVersion(0)
	case opts.ResourceVersion == "":
		w.setBookmarkAfterResourceVersion(requiredRV)
	case requestedRV == 0:
		w.setBookmarkAfterResourceVersion(c.watchCache.rv)
	default:
		w.setBookmarkAfterResourceVersion(requestedRV)
	}
	set, ok := c.watchers[ns]
	if !ok {
		set = &watcherSet{pos: map[*cacheWatcher]int{}}
		c.watchers[ns] = set
	}
	set.add(w)
	if w.allowWatchBookmarks {
		c.bookmarks.addLocked(w)
	}
	c.Unlock()

	c.liveMu.Lock()
	c.live = append(c.live, w)
	c.liveMu.Unlock()

	if c.loop == LoopInput {
		go w.process(ctx, iv, requiredRV)
	} else {
		go w.processInterval(ctx, iv, requiredRV)
	}
	return w, nil
}

// Info implements Watch.
func (c *cacheWatcher) Info() WatchInfo {
	p, _ := c.phase.Load().(Phase)
	return WatchInfo{
		Phase:      p,
		Sent:       c.sent.Load(),
		LastSend:   time.Unix(0, c.lastSend.Load()),
		Stalled:    c.stalled.Load(),
		Terminated: c.terminated.Load(),
		ChanSize:   cap(c.result),
	}
}

func parseResourceVersion(s string) (uint64, error) {
	if s == "" {
		return 0, nil
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid resource version %q: %w", s, err)
	}
	return v, nil
}

// forgetWatcher returns the watcher's forget function (upstream
// forgetWatcher, cacher.go:1230-1243).
func (c *Cacher) forgetWatcher(w *cacheWatcher, ns string) func(bool) {
	return func(drain bool) {
		c.Lock()
		defer c.Unlock()
		w.setDrainInputBufferLocked(drain)
		if set, ok := c.watchers[ns]; ok {
			set.remove(w)
			if len(set.list) == 0 {
				delete(c.watchers, ns)
			}
		}
		c.stopWatcherLocked(w)
	}
}

// stopWatcherLocked defers the stop while an event is being dispatched, so
// the dispatcher never sends on a closed input (upstream cacher.go:1184-1190).
func (c *Cacher) stopWatcherLocked(w *cacheWatcher) {
	if c.dispatching {
		c.watchersToStop = append(c.watchersToStop, w)
		return
	}
	w.stopLocked()
}

func (c *Cacher) removeLive(w *cacheWatcher) {
	c.liveMu.Lock()
	defer c.liveMu.Unlock()
	for i, x := range c.live {
		if x == w {
			c.live = append(c.live[:i], c.live[i+1:]...)
			return
		}
	}
}

// Stop stops the dispatcher and every watcher still in the index (upstream
// Stop and terminateAllWatchers, cacher.go:1178, :1212). Watchers already
// forgotten in drain mode are not in the index: their requests stop them.
func (c *Cacher) Stop() {
	c.stopOnce.Do(func() {
		close(c.stopCh)
		c.wg.Wait()
		c.Lock()
		defer c.Unlock()
		for ns, set := range c.watchers {
			for _, w := range set.list {
				c.stopWatcherLocked(w)
			}
			delete(c.watchers, ns)
		}
	})
}
