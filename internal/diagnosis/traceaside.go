package diagnosis

import (
	"fmt"
	"strings"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/watches"
)

// Every piece of evidence is of the process it claims: an execution trace
// that contradicts the samples beside it (a load balancer's other backend,
// a second server, a hostile one) is set aside with a warning, and
// nothing is decided from it.

// traceClockSlack is how far a trace's window may exceed the time between
// the samples around it: the samples are timed by the server's Date
// header, to the second.
const traceClockSlack = 3 * time.Second

// watcherSlack: a watcher may outlive its request for a moment (its
// client gone, the handler returning), so a trace may hold a few more
// initial-phase watchers than the APF dumps list executing watches; past
// twice the rows, or this many more, it is not the same process.
const watcherSlack = 5

// traceAside returns why s's trace cannot be of the process its samples
// were read from, "" when nothing contradicts it: it holds more
// watch-path goroutines than go_goroutines counted in either sample, far
// more initial-phase watchers than executing watch requests either APF
// dump lists (watcherSlack), or a window longer than the time between the samples.
func traceAside(s watches.Server) string {
	t := s.Trace
	if t == nil {
		return ""
	}
	a, b := traceSamples(s.Samples)
	var why []string
	if n, most, ok := mostGoroutines(a, b); ok && len(t.Goroutines)+t.Dropped > most {
		why = append(why, fmt.Sprintf("it holds %d watch-path goroutines, more than the %s goroutines the server ran (go_goroutines)", len(t.Goroutines)+t.Dropped, n))
	}
	tw := judgeTraceGoroutines(t)
	if rows, ok := mostWatchRows(a, b); ok && tw.total() > rows+max(rows, watcherSlack) {
		why = append(why, fmt.Sprintf("it holds %d initial-phase watchers, more than the %d executing watch requests the APF dumps list", tw.total(), rows))
	}
	if a != nil && b != nil && !a.CapturedAt.IsZero() && !b.CapturedAt.IsZero() {
		if wall := b.CapturedAt.Sub(a.CapturedAt); t.Window > wall+traceClockSlack {
			why = append(why, fmt.Sprintf("its window of %s is longer than the %s between the samples it was taken between", roundTenth(t.Window), roundTenth(wall)))
		}
	}
	if len(why) == 0 {
		return ""
	}
	return fmt.Sprintf("%s: execution trace %s set aside, nothing is decided from it: %s; it is not of this server process (another server behind a load balancer, or a hostile answer)", s.Name, t.Source, strings.Join(why, "; "))
}

// mostGoroutines is the larger go_goroutines of samples a and b, as text
// and number; ok is false when neither was read.
func mostGoroutines(a, b *watches.Sample) (string, int, bool) {
	most, ok := 0, false
	for _, s := range []*watches.Sample{a, b} {
		if s != nil && s.Metrics != nil && s.Metrics.Goroutines != nil {
			most, ok = max(most, int(*s.Metrics.Goroutines)), true
		}
	}
	return fmt.Sprint(most), most, ok
}

// mostWatchRows is the larger count of executing watch requests in the
// APF dumps of a and b (executingWatches); ok is false when neither has
// one.
func mostWatchRows(a, b *watches.Sample) (int, bool) {
	most, ok := 0, false
	for _, s := range []*watches.Sample{a, b} {
		if s == nil || s.Requests == nil {
			continue
		}
		most, ok = max(most, len(executingWatches(s.Requests))), true
	}
	return most, ok
}
