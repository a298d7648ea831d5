package watches

import (
	"sort"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// HeldHandler is a watch handler blocked writing to its client whose APF
// goroutine still holds the request's seats, with no cacheWatcher goroutine
// left under it.
type HeldHandler struct {
	Handler api.Handler `json:"handler"`
	// APFGoroutineID is the goroutine in (*initializationSignal).Wait.
	APFGoroutineID int64 `json:"apfGoroutineID"`
}

// heldHandlers lists the handlers blocked writing to their client, holding
// an APF goroutine, with no watcher goroutine whose parent they are (nor a
// goroutine (*Cacher).Watch created that this build does not recognise:
// its watcher may be alive). Without
// parent ids nothing can be linked, so nothing is listed.
func (c *Collector) heldHandlers(hasParentIDs bool) []HeldHandler {
	if !hasParentIDs {
		return nil
	}
	withWatcher := make(map[int64]bool, len(c.watchers))
	for _, w := range c.watchers {
		withWatcher[w.ParentID] = true
	}
	var out []HeldHandler
	for id, h := range c.handlers {
		a, ok := c.apf[id]
		if !ok || withWatcher[id] || c.unrecognised[id] > 0 || h.Block != api.HandlerClientNotReading {
			continue
		}
		out = append(out, HeldHandler{
			Handler:        c.handler(h),
			APFGoroutineID: a.ID,
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Handler.GoroutineID < out[j].Handler.GoroutineID })
	return out
}
