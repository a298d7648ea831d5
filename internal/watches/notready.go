package watches

import (
	"sort"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

// A watch whose cacher is not ready waits in (*Cacher).Watch before any
// cacheWatcher exists. k8s.io/apiserver v0.34.4 cacher.go:507 (v0.35.4
// :527, v0.36.3 :533) calls c.ready.waitAndReadGeneration(ctx) there when
// ResilientWatchCacheInitialization is off, releases before 1.31 call
// c.ready.wait(ctx) (ready.go:74, which calls waitAndReadGeneration, :81);
// both park in the select on r.done() (ready.go:84-88). From 1.34 the gate
// is GA and locked on (kube_features.go:386-389 in v0.34.4), and Watch
// answers 429 instead (v0.37.2 cacher.go:531-533). The functions are
// rows of the release tables (shapes.go: roleReadyWait).

// waitsForCache reports whether a goroutine waits in the cacher's ready
// state (its innermost non-runtime frame) under (*Cacher).Watch: a watch
// request's handler, blocked before its watcher is created.
func waitsForCache(st stack) bool {
	if st.topRole() != roleReadyWait {
		return false
	}
	_, ok := st.has(roleCacherWatch)
	return ok
}

// CacheWait is a watch handler waiting in (*Cacher).Watch for a watch
// cache that is not ready.
type CacheWait struct {
	Handler api.Handler `json:"handler"`
	// APFGoroutineID is the goroutine in (*initializationSignal).Wait that
	// the handler's APF filter started (priority-and-fairness.go:231 in
	// v0.37.2): the request's seats are held until it returns, which is
	// at WatchInitialized or when the handler returns (:276, after the
	// handler served inline at :284 returns). 0 when
	// the dump shows none.
	APFGoroutineID int64 `json:"apfGoroutineID,omitempty"`
}

// cacheWaits lists the Collector's handlers waiting for a watch cache,
// linked to their APF goroutine (by parent id, so only when the dump
// names parents), by goroutine id.
func (c *Collector) cacheWaits(hasParentIDs bool) []CacheWait {
	out := make([]CacheWait, 0, len(c.waiting))
	for _, h := range c.waiting {
		cw := CacheWait{Handler: c.handler(h)}
		if a, ok := c.apf[h.ID]; ok && hasParentIDs {
			cw.APFGoroutineID = a.ID
		}
		out = append(out, cw)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Handler.GoroutineID < out[j].Handler.GoroutineID })
	return out
}

// cacheWaiter is the handler record of a goroutine waitsForCache accepted:
// on HTTP/2 its connection is the parent that scheduled it, on HTTP/1.1
// the goroutine itself (net/http runs handlers on the connection's).
func (c *Collector) cacheWaiter(ref goroutineRef, g *stacks.Goroutine, st stack) handlerG {
	h2 := st.created == roleScheduleHandler
	h := handlerG{goroutineRef: ref, Block: api.HandlerOther, Transport: handlerTransport(st, h2)}
	switch {
	case h2:
		h.ConnID = g.ParentID
	case st.entryRole() == roleH1ConnServe:
		h.ConnID = g.ID
		c.conns[g.ID] = true
	default:
		h.Transport = ""
	}
	return h
}
