package diagnosis

import (
	"fmt"

	"github.com/watch-doctor/watch-doctor/internal/watches"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// The goroutine dump's side of a closure. A watcher past its initial
// phase that is in sendWatchCacheEvent, in the select on its result
// channel (k8s.io/apiserver v0.37.2 pkg/storage/cacher/cache_watcher.go:
// 441-446), has a full result buffer: its client reads slower than its
// resource changes. It reads no input meanwhile, so its input buffer
// fills next, and the dispatcher closes it (cache_watcher.go:180-231).
// The dump prints no resource of a *cacheWatcher, so this is the
// server's evidence, said beside each resource's closures.

// fullBuffers is what the last sample of ss with a goroutine dump shows of
// watchers past their initial phase sending an event; "" when no sample
// has a dump, or its dump shows none.
func fullBuffers(ss []watches.Sample) string {
	for i := len(ss) - 1; i >= 0; i-- {
		d := ss[i].Dump
		if d == nil {
			continue
		}
		n, how := 0, "in sendWatchCacheEvent"
		if len(d.Watchers) > 0 {
			how = "blocked in sendWatchCacheEvent (parked)"
			for _, w := range d.Watchers {
				if w.Blocked && w.Phase == api.PhaseStreaming {
					n++
				}
			}
		} else {
			for _, pc := range d.PhaseCounts {
				if pc.InSend && pc.Phase == api.PhaseStreaming {
					n += pc.Count
				}
			}
		}
		if n == 0 {
			return ""
		}
		at := "the last goroutine dump"
		if !ss[i].CapturedAt.IsZero() {
			at = "the goroutine dump at " + ss[i].CapturedAt.UTC().Format("15:04:05")
		}
		return fmt.Sprintf("%s: %d cacheWatcher goroutine(s) past their initial phase %s, sending an event to a full result buffer: such a watcher reads no input meanwhile, its input buffer fills next, and the cacher closes it (the dump does not say of which resource)", at, n, how)
	}
	return ""
}
