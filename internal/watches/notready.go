package watches

import (
	"fmt"
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
// answers 429 instead (v0.37.2 cacher.go:531-533).
const (
	fnReadyWait    = "k8s.io/apiserver/pkg/storage/cacher.(*ready).wait"
	fnReadyWaitGen = "k8s.io/apiserver/pkg/storage/cacher.(*ready).waitAndReadGeneration"
)

// waitsForCache reports whether a goroutine whose innermost non-runtime
// frame is top waits in the cacher's ready state under (*Cacher).Watch: a
// watch request's handler, blocked before its watcher is created.
func waitsForCache(top string, frames []stacks.Frame) bool {
	if !is(top, fnReadyWait) && !is(top, fnReadyWaitGen) {
		return false
	}
	for _, f := range frames {
		if is(f.Func, fnCacherWatch) {
			return true
		}
	}
	return false
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

// judgeCacheWaits adds a WaitingForWatchCache finding for each watch of d
// waiting for its watch cache, and returns the findings and the watchers
// to match: each such request is an executing watch in the APF dump, so
// it takes part in client matching like an initial-phase watcher (its
// wait the request's minimum age). Its Watcher stands for the watcher not
// yet created: GoroutineID is the handler's. Never stuck, never healthy.
func judgeCacheWaits(server string, d *Dump, findings []*api.Finding, toMatch []api.Watcher) ([]*api.Finding, []api.Watcher) {
	for _, cw := range d.CacheWaits {
		h := cw.Handler
		w := api.Watcher{
			GoroutineID: h.GoroutineID, Phase: api.PhaseWaitingForCache, State: h.State,
			WaitMinutes: h.WaitMinutes, Handler: &h, APFGoroutineID: cw.APFGoroutineID,
		}
		ids := []int64{h.GoroutineID}
		seats := "the dump shows no APF goroutine for it (no parent ids, or the request is exempt from APF)"
		if cw.APFGoroutineID != 0 {
			ids = append(ids, cw.APFGoroutineID)
			seats = fmt.Sprintf("APF goroutine %d in (*initializationSignal).Wait: the request holds its seats until the watch is initialized or the handler returns", cw.APFGoroutineID)
		}
		f := &api.Finding{
			Type: api.WaitingForWatchCache, Severity: api.SeverityWarning, APIServer: server, Phase: api.PhaseWaitingForCache,
			GoroutineIDs: ids, Watcher: w, Connection: h.ConnGoroutineID,
			Message: fmt.Sprintf("watch request waiting %s in the cacher for a watch cache that is not ready: no event is sent, and its APF seats stay held while it waits",
				waitText(h.WaitMinutes)),
			Evidence: []string{
				fmt.Sprintf("handler goroutine %d [%s%s] in (*ready).wait under (*Cacher).Watch: the resource's watch cache has not (re)initialised from storage", h.GoroutineID, h.State, waitSuffix(h.WaitMinutes)),
				seats,
			},
		}
		if h.WaitMinutes >= 1 {
			m := h.WaitMinutes
			f.BlockedMinutes = &m
			f.Severity = api.SeverityCritical
		}
		findings = append(findings, f)
		toMatch = append(toMatch, w)
	}
	return findings, toMatch
}

// waitText is how long a goroutine has waited, as the runtime printed it.
func waitText(minutes int) string {
	if minutes < 1 {
		return "under a minute"
	}
	return "for " + minutesText(minutes)
}

// cacheWaitAdvice says what to do about WaitingForWatchCache findings, one
// sentence per API server.
func cacheWaitAdvice(r *api.Report) []string {
	n := map[string]int{}
	var servers []string
	for _, f := range r.Findings {
		if f.Type != api.WaitingForWatchCache {
			continue
		}
		if n[f.APIServer] == 0 {
			servers = append(servers, f.APIServer)
		}
		n[f.APIServer]++
	}
	sort.Strings(servers)
	out := make([]string, 0, len(servers))
	for _, s := range servers {
		out = append(out, fmt.Sprintf("%s: %d watch request(s) wait for a watch cache that is not ready, holding their APF seats: the cacher's initial LIST from etcd fails or is too slow. "+
			"Look at the kube-apiserver log for \"cacher (...): unexpected ListAndWatch error\" (k8s.io/apiserver cacher.go), at apiserver_watch_cache_initializations_total and apiserver_watch_cache_initialization_errors_total (cacher/metrics/metrics.go), "+
			"and at storage errors (apiserver_storage_*, etcd_request_*, etcd health, its size quota, objects too large to list). Fix storage and the cache initialises; the waiting watches then proceed. "+
			"From kube-apiserver 1.34 (ResilientWatchCacheInitialization, GA) such watches get 429 Too Many Requests instead of waiting.",
			s, n[s]))
	}
	return out
}

// cacheWaiter is the handler record of a goroutine waitsForCache accepted:
// on HTTP/2 its connection is the parent that scheduled it, on HTTP/1.1
// the goroutine itself (net/http runs handlers on the connection's).
func (c *Collector) cacheWaiter(ref goroutineRef, g *stacks.Goroutine) handlerG {
	h2 := is(g.CreatedBy.Func, fnScheduleHandler) || is(g.CreatedBy.Func, fnBundledSchedule)
	h := handlerG{goroutineRef: ref, Block: api.HandlerOther, Transport: handlerTransport(g.Frames, h2)}
	switch {
	case h2:
		h.ConnID = g.ParentID
	case is(entryFunc(g.Frames), fnH1ConnServe):
		h.ConnID = g.ID
		c.conns[g.ID] = true
	default:
		h.Transport = ""
	}
	return h
}
