package diagnosis

import (
	"fmt"
	"sort"

	"github.com/watch-doctor/watch-doctor/internal/watches"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// judgeCacheWaits adds a WaitingForWatchCache finding for each watch of d
// waiting for its watch cache, and returns the findings and the watchers
// to match: each such request is an executing watch in the APF dump, so
// it takes part in client matching like an initial-phase watcher (its
// wait the request's minimum age). Its Watcher stands for the watcher not
// yet created: GoroutineID is the handler's. Never stuck, never healthy.
func judgeCacheWaits(server string, d *watches.Dump, findings []*api.Finding, toMatch []api.Watcher) ([]*api.Finding, []api.Watcher) {
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
