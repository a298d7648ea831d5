package cacher

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/watch"
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
