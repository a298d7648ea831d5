package cacher

import (
	"errors"
	"fmt"
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
