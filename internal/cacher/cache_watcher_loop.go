package cacher

// The watcher goroutine's loops, of both releases the package models
// (Config.Loop): upstream keeps them in cache_watcher.go.

import (
	"context"
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/watch-doctor/watch-doctor/internal/cacher/park"
)

// processInterval replays the interval, then streams (upstream
// cache_watcher.go:450-532). It is the goroutine's entry point.
func (c *cacheWatcher) processInterval(ctx context.Context, iv *interval, resourceVersion uint64) {
	defer c.exited()
	defer close(c.result)
	defer c.Stop()

	c.lastSend.Store(c.clock.Now().UnixNano())
	if iv.rv > resourceVersion {
		resourceVersion = iv.rv
	}
	initEvents := int64(0)
	for {
		e, err := iv.Next()
		if err != nil {
			// The history overwrote events this watcher still had to send;
			// upstream logs and ends the watch, the client re-lists.
			return
		}
		if e == nil {
			break
		}
		if c.sendWatchCacheEvent(e, c.stallDeadline()) == sendStalled {
			c.endStalled(initEvents)
			return
		}
		if e.ResourceVersion > resourceVersion {
			resourceVersion = e.ResourceVersion
		}
		initEvents++
	}
	c.counters.initEvents.Add(initEvents)
	c.iv.Store(nil)
	if iv.endBookmark != nil {
		if c.sendWatchCacheEvent(iv.endBookmark, c.stallDeadline()) == sendStalled {
			c.endStalled(0)
			return
		}
	}
	c.process(ctx, nil, resourceVersion)
}

// errInitialEventsStalled is what processInitialEvents returns when the
// stall timeout gave up on the watcher.
var errInitialEventsStalled = errors.New("no progress sending initial events")

// processInitialEvents replays the interval in the v1.38 loop (upstream
// v0.38.0-beta.0 cache_watcher.go:528-612): each event through
// sendWatchCacheEvent, then the initial-events-end bookmark. With a stall
// timeout it is our rebase of PR 141899 onto that loop
// (test/e2e/patches/apiserver-v0.38.0-beta.0): a stall returns
// errInitialEventsStalled, so process returns, before WatchInitialized,
// and its deferred Stop and close(result) run, as processInterval's do in
// v1.37. An interval the history overwrote returns its error, as upstream.
func (c *cacheWatcher) processInitialEvents(iv *interval) error {
	c.lastSend.Store(c.clock.Now().UnixNano())
	initEvents := int64(0)
	for {
		e, err := iv.Next()
		if err != nil {
			return err
		}
		if e == nil {
			break
		}
		if c.sendWatchCacheEvent(e, c.stallDeadline()) == sendStalled {
			c.endStalled(initEvents)
			return errInitialEventsStalled
		}
		initEvents++
	}
	c.counters.initEvents.Add(initEvents)
	c.iv.Store(nil)
	if iv.endBookmark != nil {
		if c.sendWatchCacheEvent(iv.endBookmark, c.stallDeadline()) == sendStalled {
			c.endStalled(0)
			return errInitialEventsStalled
		}
	}
	return nil
}

// endStalled records the end of a watcher that made no progress for
// StallTimeout and calls the request's stall hook (OnStall). It does not
// tell APF the watch is initialized: PR 141899 returns from processInterval
// before process, which is where WatchInitialized is called, so the
// request's seats stay held until its handler returns; measured on a
// patched kube-apiserver, the handler stays blocked writing to the client
// (test/e2e TestPatchedServers). processInterval then returns and its
// deferred Stop forgets the watcher (closing done) and closes result.
func (c *cacheWatcher) endStalled(initEvents int64) {
	c.counters.initEvents.Add(initEvents)
	c.counters.stalled.Add(1)
	c.stalled.Store(true)
	if c.onStall != nil {
		c.onStall()
	}
}

// process forwards events from input (upstream v0.37.2
// cache_watcher.go:534-560). It has no stall timeout: a watcher that stops
// draining input is closed by the dispatcher in add.
//
// In LoopInput it is the goroutine's entry point (upstream v0.38.0-beta.0
// cache_watcher.go:478-526): iv is the interval upstream reads as the
// first item of input (:485-494; here it is handed over directly, so it
// never takes an input slot), replayed by processInitialEvents before
// anything streams; from then on resourceVersion is the interval's. iv is
// nil when processInterval calls it.
func (c *cacheWatcher) process(ctx context.Context, iv *interval, resourceVersion uint64) {
	if iv != nil {
		defer c.exited()
		defer close(c.result)
		defer c.Stop()
		if err := c.processInitialEvents(iv); err != nil {
			return
		}
		resourceVersion = iv.rv
	}
	c.phase.Store(PhaseStreaming)
	c.initialized()
	for {
		c.park.Set(parkInput, time.Time{}, nil)
		select {
		case e, ok := <-c.input:
			c.park.Set(park.Running, time.Time{}, nil)
			if !ok {
				return
			}
			c.taken.Add(1)
			if e.ResourceVersion > resourceVersion || (e.Type == watch.Bookmark && e.ResourceVersion == resourceVersion && !c.wasBookmarkAfterRvSent()) {
				c.sendWatchCacheEvent(e, time.Time{})
			}
		case <-ctx.Done():
			c.park.Set(park.Running, time.Time{}, nil)
			return
		}
	}
}

func (c *cacheWatcher) exited() {
	c.iv.Store(nil)
	c.phase.Store(PhaseDone)
	c.park.Set(park.Exited, time.Time{}, nil)
	if c.exitHook != nil {
		c.exitHook(c)
	}
}
