package metrics

// The statements below were checked against k8s.io/apiserver v0.37.2; the
// file:line references are to that module.
//
// apiserver_terminated_watchers_total is incremented in one place,
// cacheWatcher.add's closeFunc (pkg/storage/cacher/cache_watcher.go:190),
// which runs when an event cannot be queued into the watcher's input buffer
// before the dispatch timer fires (cache_watcher.go:218-230). The cacher
// calls add only for non-bookmark events (pkg/storage/cacher/cacher.go:1026-
// 1047); bookmarks go through nonblockingAdd and are dropped when the buffer
// is full (cacher.go:1004-1007, cache_watcher.go:167-173). A watcher stuck in
// its initial-events replay is blocked sending to its result channel
// (cache_watcher.go:441-446, called from processInterval at :502) and does
// not read its input buffer. When its client goes away or times out it is
// stopped through Stop/forget (cache_watcher.go:132-134), which does not
// count. So on a resource without writes it is never counted; it is counted
// only once new events for its resource fill its input buffer.
//
// apiserver_init_events_total is added after processInterval's replay loop
// ends (loop cache_watcher.go:479-517, Add at :519-521): a replay that never
// ends adds nothing, however many events it already sent.
//
// A watch is released from API Priority and Fairness when the cache watcher
// calls utilflowcontrol.WatchInitialized (cache_watcher.go:541, at the start
// of process, after the replay and its bookmark): a stuck replay keeps its
// seats in apiserver_flowcontrol_current_executing_seats.

const (
	blindTerminated = "does not count watchers stuck in the initial-events replay: the cacher counts a watcher only when it closes it for a full input buffer, " +
		"which a stuck watcher reaches only if new events for its resource arrive; one stopped by its client or its timeout is not counted"
	blindTerminatedSrc = "k8s.io/apiserver v0.37.2 pkg/storage/cacher/cache_watcher.go:190 (closeFunc in add, :180-231); stuck send at :441-446"
	blindInit          = "counts a watch's initial events only when its replay ends: a stuck replay adds nothing, however many events it sent"
	blindInitSrc       = "k8s.io/apiserver v0.37.2 pkg/storage/cacher/cache_watcher.go:519-521 (after the replay loop at :479-517)"
	blindSeats         = "a WATCH holds its seats until its initial replay ends: seats of stuck watches stay held, they are not work in progress"
	blindSeatsSrc      = "k8s.io/apiserver v0.37.2 pkg/storage/cacher/cache_watcher.go:541 (WatchInitialized after the replay)"
)

// blindSpots returns the blind spots that matter for this snapshot: the
// watch cache ones when some resource has open watchers, the APF one when
// some priority level has executing seats.
func blindSpots(s *Snapshot) []BlindSpot {
	var out []BlindSpot
	watching := false
	for _, r := range s.Resources {
		if r.Watchers > 0 && r.Cached() {
			watching = true
			break
		}
	}
	if watching {
		out = append(out,
			BlindSpot{Metric: InitEvents, Text: blindInit, Source: blindInitSrc},
			BlindSpot{Metric: TerminatedWatchers, Text: blindTerminated, Source: blindTerminatedSrc},
		)
	}
	for _, pl := range s.PriorityLevels {
		if pl.ExecutingSeats > 0 {
			out = append(out, BlindSpot{Metric: ExecutingSeats, Text: blindSeats, Source: blindSeatsSrc})
			break
		}
	}
	return out
}
