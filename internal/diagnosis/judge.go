package diagnosis

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/watches"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// judge applies the rules of the finding types to the watchers of cur,
// using prev (an earlier debug=2 sample of the same process) to tell a
// watcher that made progress from one that did not. It returns the
// findings and the initial-phase watchers, which all hold an executing
// APF request and so take part in client matching.
func judge(ctx context.Context, server string, cur watches.Sample, prev *watches.Sample, slack time.Duration) ([]*api.Finding, []api.Watcher) {
	var before map[int64]api.Watcher
	var interval time.Duration
	if prev != nil {
		before = make(map[int64]api.Watcher, len(prev.Dump.Watchers))
		for _, w := range prev.Dump.Watchers {
			before[w.GoroutineID] = w
		}
		if !cur.CapturedAt.IsZero() && !prev.CapturedAt.IsZero() {
			interval = cur.CapturedAt.Sub(prev.CapturedAt)
		}
	}
	var findings []*api.Finding
	var initial []api.Watcher
	msgs := interner{}
	for _, w := range cur.Dump.Watchers {
		if done(ctx) {
			break
		}
		if w.Phase == api.PhaseInitial {
			initial = append(initial, w)
		}
		if !w.Blocked {
			continue
		}
		f := &api.Finding{
			APIServer:    server,
			Phase:        w.Phase,
			GoroutineIDs: w.GoroutineIDs(),
			Watcher:      w,
		}
		if w.Handler != nil {
			f.Connection = w.Handler.ConnGoroutineID
		}
		minutes := w.WaitMinutes
		f.BlockedMinutes = &minutes
		f.Evidence = append(f.Evidence, watcherEvidence(w)...)
		switch w.Phase {
		case api.PhaseStreaming:
			if w.WaitMinutes < 1 {
				continue
			}
			f.Type, f.Severity = api.BlockedStreaming, api.SeverityWarning
			f.Message = fmt.Sprintf("streaming watcher blocked sending for %s; upstream closes it only when a new event for it cannot be queued (cache_watcher.go add)", minutesText(w.WaitMinutes))
		case api.PhaseInitial:
			judgeInitial(f, w, before, prev != nil, interval, slack)
		}
		f.Message = msgs.intern(f.Message)
		findings = append(findings, f)
	}
	return findings, initial
}

// judgeInitial decides stuck versus slow for a blocked initial-phase
// watcher.
//
// The wait the runtime prints is approximate, and a fresh block can print
// "1 minutes" (stacks.Goroutine.WaitMinutes says why), so a single sample
// cannot be sure.
//
// Two samples decide by the event: sendWatchCacheEvent's arguments are
// the watcher and the *watchCacheEvent being sent. Blocked on the same
// event in both samples, the watcher sent nothing in between (the event
// stays referenced while it waits, so its address cannot be reused); on
// another event, it made progress. Without the arguments (a dump read
// without them), a wait that went down, or grew less than the interval's
// whole minutes, proves progress.
func judgeInitial(f *api.Finding, w api.Watcher, before map[int64]api.Watcher, twoSamples bool, interval, slack time.Duration) {
	p, seen := before[w.GoroutineID]
	seenBlocked := seen && p.Phase == api.PhaseInitial && p.Blocked
	pointers := seenBlocked && p.Event != "" && w.Event != ""
	sameEvent := pointers && p.Event == w.Event && p.CacheWatcher == w.CacheWatcher
	minutes := -1 // whole minutes surely between the samples; -1 unknown
	if interval > 0 {
		minutes = max(int((interval-2*slack)/time.Minute), 0)
	}
	waitFell := seenBlocked && w.WaitMinutes < p.WaitMinutes
	notContinuous := seenBlocked && minutes > 0 && p.WaitMinutes >= 1 && w.WaitMinutes < p.WaitMinutes+minutes
	progressed := (pointers && !sameEvent) || (!pointers && (waitFell || notContinuous))
	between := "between the samples"
	if interval > 0 {
		between = fmt.Sprintf("over %s", roundDuration(interval))
	}
	proven := interval > 0 && interval-2*slack >= time.Minute
	switch {
	case progressed && pointers:
		f.Type, f.Severity = api.SlowInitialEvents, api.SeverityInfo
		f.Message = fmt.Sprintf("replaying initial events and progressing: it sent events %s (it now waits on another event)", between)
		f.Evidence = append(f.Evidence, fmt.Sprintf("same goroutine %d blocked in both samples on different events (%s, then %s)", w.GoroutineID, p.Event, w.Event))
	case progressed && w.WaitMinutes >= 1:
		f.Type, f.Severity = api.SlowInitialEvents, api.SeverityWarning
		f.Message = fmt.Sprintf("replaying initial events and progressing, maybe with long stalls: the runtime reported it blocked %s in the first sample and %s in the second, so it sent events %s", minutesText(p.WaitMinutes), minutesText(w.WaitMinutes), between)
		f.Evidence = append(f.Evidence, fmt.Sprintf("same goroutine %d blocked in both samples, wait %d -> %d minutes %s: not continuous", w.GoroutineID, p.WaitMinutes, w.WaitMinutes, between))
	case progressed:
		f.Type, f.Severity = api.SlowInitialEvents, api.SeverityInfo
		f.Message = fmt.Sprintf("replaying initial events and progressing: the runtime reported it blocked %s in the first sample, under a minute now", minutesText(p.WaitMinutes))
	case sameEvent && (w.WaitMinutes >= 1 || proven):
		f.Type, f.Severity = api.StuckInitialEvents, api.SeverityCritical
		f.Message = fmt.Sprintf("stuck replaying initial events: blocked on the same event in both samples, %s apart, so it sent nothing in between (the runtime reports a wait of %s); past the 30 s no-progress bound of the proposed fix (kubernetes PR 141899), and nothing frees it before the request ends", strings.TrimPrefix(between, "over "), minutesText(w.WaitMinutes))
		f.Evidence = append(f.Evidence, fmt.Sprintf("same goroutine %d blocked on the same event %s in both samples %s", w.GoroutineID, w.Event, between))
	case sameEvent:
		f.Type, f.Severity = api.SlowInitialEvents, api.SeverityWarning
		f.Message = fmt.Sprintf("replaying initial events: blocked on the same event in both samples only %s apart, and the runtime reports under a minute: no progress between them, but take samples more than a minute apart to decide", strings.TrimPrefix(between, "over "))
		f.Evidence = append(f.Evidence, fmt.Sprintf("same goroutine %d blocked on the same event %s in both samples %s", w.GoroutineID, w.Event, between))
	case w.WaitMinutes >= 1:
		f.Type, f.Severity = api.StuckInitialEvents, api.SeverityCritical
		f.Message = fmt.Sprintf("stuck replaying initial events: the runtime reports it blocked sending for %s, past the 30 s no-progress bound of the proposed fix (kubernetes PR 141899); nothing frees it before the request ends. The runtime counts a wait from the garbage collection before the one that saw it blocked, so a fresh block can read a minute long: a second sample confirms", minutesText(w.WaitMinutes))
		if seenBlocked {
			f.Evidence = append(f.Evidence, fmt.Sprintf("same goroutine %d blocked in the initial phase in both samples, wait %d -> %d minutes %s", w.GoroutineID, p.WaitMinutes, w.WaitMinutes, between))
		}
	default:
		f.Type, f.Severity = api.SlowInitialEvents, api.SeverityWarning
		switch {
		case !twoSamples:
			f.Message = "replaying initial events, blocked sending for under a minute: may be a slow client still progressing; a second sample decides (diagnose samples twice; or analyze two captures of the same server)"
		case seen && !seenBlocked:
			f.Message = "replaying initial events and progressing: it was not blocked in the first sample; blocked under a minute now"
			f.Severity = api.SeverityInfo
		case seenBlocked && minutes >= 3:
			f.Message = fmt.Sprintf("replaying initial events and progressing: blocked in both samples %s apart yet never for a full minute", roundDuration(interval))
			f.Severity = api.SeverityInfo
		case seenBlocked:
			f.Message = fmt.Sprintf("replaying initial events, blocked under a minute in both samples (%s): not proven stuck; samples more than a minute apart decide", strings.TrimPrefix(between, "over "))
		default:
			f.Message = "replaying initial events, blocked sending for under a minute; it started after the first sample"
		}
	}
}

func watcherEvidence(w api.Watcher) []string {
	ev := []string{fmt.Sprintf("goroutine %d [%s%s] in sendWatchCacheEvent from %s", w.GoroutineID, w.State, waitSuffix(w.WaitMinutes), phaseFunc(w))}
	if h := w.Handler; h != nil {
		switch h.Block {
		case api.HandlerClientNotReading:
			ev = append(ev, fmt.Sprintf("handler goroutine %d [%s%s] blocked in http2 writeDataFromHandler: the client stopped reading", h.GoroutineID, h.State, waitSuffix(h.WaitMinutes)))
		case api.HandlerWaitingForEvents:
			ev = append(ev, fmt.Sprintf("handler goroutine %d waits for events in HandleHTTP", h.GoroutineID))
		default:
			ev = append(ev, fmt.Sprintf("handler goroutine %d [%s]", h.GoroutineID, h.State))
		}
	}
	if w.APFGoroutineID != 0 {
		ev = append(ev, fmt.Sprintf("APF goroutine %d in initializationSignal.Wait: seats held until WatchInitialized", w.APFGoroutineID))
	}
	return ev
}

// phaseFunc is the watcher loop's function w is in: the classifier's word
// (api.Watcher.Loop), else the one its phase had up to v1.37.
func phaseFunc(w api.Watcher) string {
	if w.Loop != "" {
		return w.Loop
	}
	if w.Phase == api.PhaseStreaming {
		return "process"
	}
	return "processInterval"
}

func waitSuffix(m int) string {
	if m < 1 {
		return ""
	}
	return fmt.Sprintf(", %d minutes", m)
}

func minutesText(m int) string {
	switch {
	case m < 1:
		return "under a minute"
	case m == 1:
		return "at least 1 minute"
	}
	return fmt.Sprintf("at least %d minutes", m)
}

func roundDuration(d time.Duration) string { return d.Round(time.Second).String() }
