package diagnosis

import (
	"fmt"
	"sort"
	"strings"

	"github.com/watch-doctor/watch-doctor/internal/watches"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// judgeHeld adds a HeldAfterWatcherClosed finding for each held handler of
// d blocked for a minute or more, and returns the findings and the watchers
// to match: each such handler holds one executing APF request, so it takes
// part in client matching like an initial-phase watcher, with the handler's
// wait as the request's minimum age. Its Watcher stands for the closed
// watcher: GoroutineID is the handler's (the watcher has none).
func judgeHeld(server string, d *watches.Dump, findings []*api.Finding, toMatch []api.Watcher) ([]*api.Finding, []api.Watcher) {
	for _, h := range d.Held {
		if h.Handler.WaitMinutes < 1 {
			continue
		}
		handler := h.Handler
		w := api.Watcher{
			GoroutineID: handler.GoroutineID, Phase: api.PhaseClosed, State: handler.State,
			WaitMinutes: handler.WaitMinutes, Handler: &handler, APFGoroutineID: h.APFGoroutineID,
		}
		minutes := handler.WaitMinutes
		f := &api.Finding{
			Type: api.HeldAfterWatcherClosed, Severity: api.SeverityCritical, APIServer: server, Phase: api.PhaseClosed,
			BlockedMinutes: &minutes,
			GoroutineIDs:   []int64{handler.GoroutineID, h.APFGoroutineID},
			Watcher:        w,
			Connection:     handler.ConnGoroutineID,
			Message: fmt.Sprintf("watch handler blocked writing to its client for %s with no cacheWatcher left: its APF seats stay held until the request ends or the client goes, and the client was not told (the shape kubernetes PR 141899 leaves behind)",
				minutesText(handler.WaitMinutes)),
			Evidence: []string{
				fmt.Sprintf("handler goroutine %d [%s%s] in writeDataFromHandler or a socket write: the client's window is full", handler.GoroutineID, handler.State, waitSuffix(handler.WaitMinutes)),
				fmt.Sprintf("APF goroutine %d in (*initializationSignal).Wait: WatchInitialized was never signalled, so the request still holds its seats", h.APFGoroutineID),
				"no cacheWatcher goroutine was created by this handler: the watcher was closed (a stall timeout, or the cacher's forget) while the handler was blocked",
			},
		}
		findings = append(findings, f)
		toMatch = append(toMatch, w)
	}
	return findings, toMatch
}

// heldAdvice says what to do about HeldAfterWatcherClosed findings.
func heldAdvice(r *api.Report) []string {
	n, seats, unknown := 0, 0, 0
	seen := map[string]bool{}
	var names []string
	add := func(name string) {
		if name != "" && !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	for _, f := range r.Findings {
		if f.Type != api.HeldAfterWatcherClosed {
			continue
		}
		n++
		if f.SeatsKnown() {
			seats += f.Client.Seats
		} else {
			unknown++
		}
		switch {
		case f.Client == nil:
		case f.Client.Match != api.MatchAmbiguous:
			add(fmt.Sprintf("%q", f.Client.User))
		default:
			if len(f.Candidates) > 0 {
				add("one of " + candidatesNamed(f) + " (ambiguous: check each)")
			}
		}
	}
	if n == 0 {
		return nil
	}
	sort.Strings(names)
	who := "their clients"
	if len(names) > 0 {
		who = strings.Join(names, ", ")
	}
	held := fmt.Sprintf("%d APF seat(s)", seats)
	if unknown > 0 {
		held = fmt.Sprintf("APF seats (%d known; %d handler(s) of unknown seats)", seats, unknown)
	}
	return []string{fmt.Sprintf("%d watch handler(s) still hold %s after their watcher was closed: restart or fix %s, which stopped reading; the server frees the handler and the seats only when the request ends or the connection closes, and the client does not know its watch is dead. A fix that ends the response stream on a stall (test/e2e/patches, mode complete) frees them.", n, held, who)}
}
