// Package cacher is watch-doctor's own model of the kube-apiserver watch
// cache (k8s.io/apiserver/pkg/storage/cacher, v0.37.2), written from scratch
// and reduced to what decides whether a watch is delivered: a store of
// current objects with immutable snapshots, a history ring, intervals served
// to watchers, cacheWatchers with input and result channels sized as
// upstream sizes them, a dispatcher bound by a shared time budget, bookmarks,
// and processInterval (initial events) followed by process (streaming).
//
// It adds one thing upstream does not have: Config.StallTimeout, the
// no-progress timeout of the initial phase proposed in kubernetes PR 141899
// (0 keeps upstream behaviour).
//
// Config.Loop chooses the watcher loop of the release modelled: v0.37's
// (LoopInterval, the default: processInterval, then process) or v0.38's
// (LoopInput: the goroutine starts in process, which replays the interval
// in processInitialEvents first; upstream PR 141449). The stall timeout
// acts the same in both, as our patches for the two releases do
// (test/e2e/patches), measured on real patched servers of both.
//
// The file split mirrors upstream's, with its file names: cacher.go
// (Cacher, Watch, dispatcher), cache_watcher.go (cacheWatcher; its
// goroutine's loops, of both releases, in cache_watcher_loop.go),
// watch_cache.go (store + history under one lock), watch_cache_history.go
// (the history ring), watch_cache_interval.go (the interval a watcher
// replays), time_budget.go; store.go (upstream's store/ package) and
// bookmarks.go (upstream keeps its watcherBookmarkTimeBuckets in cacher.go).
// quiesce.go is ours: it lets a driver that steps a fake clock know when
// every goroutine of the cache is parked, so that a replay is deterministic;
// the goroutines publish their waits through package park.
//
// All time goes through injected k8s.io/utils/clocks: Config.Clock for
// everything but the dispatcher's time budget, which runs on
// Config.BudgetClock as upstream's runs on the real clock. Goroutine entry
// points and blocking functions carry upstream's names
// ((*cacheWatcher).processInterval, (*cacheWatcher).sendWatchCacheEvent,
// (*cacheWatcher).process, (*Cacher).dispatchEvents), so a goroutine dump of
// this package reads like one of kube-apiserver once the package path is
// mapped.
//
// Life of one watch, as in upstream:
//
//	Watch ──► register (index by scope, bookmark buckets) ──► go processInterval
//	processInterval: for each initial event: sendWatchCacheEvent ─┐
//	                 (blocks on result <- event; patched: at most   │ stall ─► stop, return
//	                  StallTimeout without a successful send)       │
//	                 initial-events-end bookmark (watch-list)  ◄───┘
//	process:         for event in input: sendWatchCacheEvent
//	dispatcher:      event ─► nonblockingAdd to every interested watcher;
//	                 the blocked ones get add(event, budget timer); a watcher
//	                 that cannot take the event within the budget is forgotten.
package cacher
