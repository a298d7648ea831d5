package diagnosis

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/watches"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/audit"
)

// Watches the server closes (WatchClosedByServer). The cacher's
// dispatcher gives each event a shared time budget to reach the watchers
// whose input buffer is full (k8s.io/apiserver v0.37.2
// pkg/storage/cacher/cacher.go:1033-1060); a watcher still full when the
// timer fires is closed (cache_watcher.go:180-231: counted in
// apiserver_terminated_watchers_total at :190, logged "Forcing ...
// watcher close due to unresponsiveness" at :214; v0.38.0-beta.0 at :206
// and :230). A watcher in its initial-events replay reads no input
// (processInterval, :450-521), so a client slower than its replay is
// closed once its resource has written a buffer's worth of events; it
// then watches again from the start and loops. A replay cut by the close
// skips its remaining sends (:435-439) and still counts every event of
// its snapshot in apiserver_init_events_total (:519-521).

// minClosuresForLoop is the number of closures between the samples from
// which a WatchClosedByServer finding is critical: the client was closed,
// came back and was closed again.
const minClosuresForLoop = 2

// closedWatches is the step that finds, per resource, the watchers the
// cacher closed between the first and the last sample of s that read
// /metrics (same process), and ties them to the clients whose watch of
// that resource came back with a new start time in the APF dumps, as far
// as that goes: one client, named (likely: the counter is the resource's,
// not the client's); several, "one of these"; none, the resource alone,
// saying the evidence could not tie a client. Never silent.
func closedWatches(s watches.Server, events []audit.Event) added {
	a, b := counterSamples(s.Samples)
	if a == nil {
		return added{}
	}
	var window time.Duration
	if !a.CapturedAt.IsZero() && !b.CapturedAt.IsZero() {
		window = b.CapturedAt.Sub(a.CapturedAt)
	}
	var out added
	dump := fullBuffers(s.Samples)
	for _, key := range sortedKeys(b.Metrics.TerminatedWatchers) {
		closed := counterGrowth(a.Metrics.TerminatedWatchers, b.Metrics.TerminatedWatchers, key)
		if closed < 1 {
			continue
		}
		c := closure{server: s.Name, key: key, closed: int(closed), window: window, a: a, b: b, dump: dump}
		c.reasons = reasonGrowth(a.Metrics.TerminatedReasons[key], b.Metrics.TerminatedReasons[key])
		c.clients = returningClients(s.Samples[sampleIndex(s.Samples, a)+1:], a.CapturedAt, key)
		if !a.CapturedAt.IsZero() && !b.CapturedAt.IsZero() {
			c.early = earlyEndsOf(events, key, a.CapturedAt, b.CapturedAt)
		}
		out.findings = append(out.findings, c.finding())
	}
	return out
}

// counterSamples are the first and the last sample of s whose /metrics
// was read, when they are two and of the same process (the counters
// restart with it); nil otherwise.
func counterSamples(ss []watches.Sample) (a, b *watches.Sample) {
	for i := range ss {
		if ss[i].Metrics == nil {
			continue
		}
		if a == nil {
			a = &ss[i]
		}
		b = &ss[i]
	}
	if a == nil || a == b {
		return nil, nil
	}
	pa, pb := a.Metrics.ProcessStartTime, b.Metrics.ProcessStartTime
	if pa == nil || pb == nil || *pa != *pb {
		return nil, nil
	}
	return a, b
}

// counterGrowth is b[key] - a[key], where a series absent from a counts 0:
// a counter vector exposes a series only once it has been added to, and
// both samples come from the same process. NaN and negative growth (a
// counter that went back) count 0.
func counterGrowth(a, b map[string]float64, key string) float64 {
	after, ok := b[key]
	if !ok || math.IsNaN(after) {
		return 0
	}
	before := a[key]
	if math.IsNaN(before) || after < before {
		return 0
	}
	return math.Floor(after - before)
}

// reasonGrowth is the growth of each reason's series, where the server's
// counter has a reason label; nil without one.
func reasonGrowth(a, b map[string]float64) map[string]int {
	var out map[string]int
	for reason := range b {
		if reason == "" {
			continue
		}
		if d := counterGrowth(a, b, reason); d >= 1 {
			if out == nil {
				out = map[string]int{}
			}
			out[reason] = int(d)
		}
	}
	return out
}

func sortedKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// returning is one client (user and path) whose watch of a resource
// started after the first sample: a new request, the newest first seen.
type returning struct {
	// starts are the distinct start times of its watch requests after
	// the first sample, oldest first.
	starts []time.Time
	// newest is its newest row; atLast says the last sample with an APF
	// dump listed it executing (still initializing).
	newest apf.Request
	atLast bool
}

// sampleIndex is the index of the sample a points to in ss.
func sampleIndex(ss []watches.Sample, a *watches.Sample) int {
	for i := range ss {
		if &ss[i] == a {
			return i
		}
	}
	return len(ss) - 1
}

// returningClients are the clients whose executing watch of key the APF
// dumps of ss, the samples after the first of the window, list with a
// start time after since (that sample's time): they watched it again in
// the window. The first sample's own dump is not read: it is fetched after
// its /metrics, so a watch started in between (a client's first) would
// pass for a return. In order of user and path.
func returningClients(ss []watches.Sample, since time.Time, key string) []returning {
	byClient := map[string]*returning{}
	lastWithDump := -1
	for i := range ss {
		if ss[i].Requests != nil {
			lastWithDump = i
		}
	}
	for i := range ss {
		for _, rq := range executingWatches(ss[i].Requests) {
			if resourceKey(rq) != key || !rq.StartTime.After(since) {
				continue
			}
			id := userOf(rq) + "\x00" + rq.Path
			r := byClient[id]
			if r == nil {
				r = &returning{}
				byClient[id] = r
			}
			if n := len(r.starts); n == 0 || !rq.StartTime.Equal(r.starts[n-1]) {
				r.starts = append(r.starts, rq.StartTime)
			}
			if !rq.StartTime.Before(r.newest.StartTime) {
				r.newest = rq
				r.atLast = i == lastWithDump
			}
		}
	}
	out := make([]returning, 0, len(byClient))
	for _, r := range byClient {
		sort.Slice(r.starts, func(i, j int) bool { return r.starts[i].Before(r.starts[j]) })
		r.starts = dedupTimes(r.starts)
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		if ui, uj := userOf(out[i].newest), userOf(out[j].newest); ui != uj {
			return ui < uj
		}
		return out[i].newest.Path < out[j].newest.Path
	})
	return out
}

func dedupTimes(ts []time.Time) []time.Time {
	out := ts[:0]
	for _, t := range ts {
		if len(out) == 0 || !t.Equal(out[len(out)-1]) {
			out = append(out, t)
		}
	}
	return out
}

// closure is what closedWatches found of one resource.
type closure struct {
	server  string
	key     string
	closed  int
	reasons map[string]int
	window  time.Duration
	a, b    *watches.Sample
	clients []returning
	// early are the audit log's watches of the resource that ended long
	// before their timeoutSeconds in the window (closedaudit.go).
	early []earlyEnds
	// dump is what the goroutine dump shows of full buffers
	// (closeddump.go); "" when nothing.
	dump string
}

// finding is the WatchClosedByServer finding of c: critical from
// minClosuresForLoop closures, a warning below.
func (c closure) finding() *api.Finding {
	group, res, _ := strings.Cut(c.key, "/")
	f := &api.Finding{
		Type: api.WatchClosedByServer, Severity: api.SeverityWarning, APIServer: c.server, Phase: api.PhaseRelist,
		GoroutineIDs: []int64{},
		Closures:     &api.Closures{Group: group, Resource: res, WindowSeconds: c.window.Seconds(), Closed: c.closed, Reasons: c.reasons},
	}
	if c.closed >= minClosuresForLoop {
		f.Severity = api.SeverityCritical
	}
	f.Evidence = append(f.Evidence, c.counterEvidence(res))
	f.Evidence = append(f.Evidence, c.replayEvidence(f.Closures, res)...)
	for _, ee := range c.early {
		f.Evidence = append(f.Evidence, ee.evidence())
	}
	if c.dump != "" {
		f.Evidence = append(f.Evidence, c.dump)
	}
	clients, picked := c.clients, false
	if r, ok := auditPick(c.clients, c.early); ok {
		clients, picked = []returning{r}, true
	}
	switch len(clients) {
	case 0:
		if len(c.early) == 1 {
			// The audit log ties them: one user and path whose watches
			// ended early in the window.
			ee := c.early[0]
			f.Client = &api.Client{User: ee.user, Verb: "watch", Path: ee.path, Resource: res, Match: api.MatchLikely}
			f.Closures.Returns = len(ee.events) - 1
			f.Message = fmt.Sprintf("the server closed %d watcher(s) of %s in %s for not keeping up, and the audit log shows %s's watches of it ending long before their timeoutSeconds %d time(s) in that window", c.closed, keyName(c.key), c.windowText(), ee.user, len(ee.events))
			break
		}
		f.Message = fmt.Sprintf("the server closed %d watcher(s) of %s in %s for not keeping up; the evidence could not tie them to a client: no watch of %s came back with a new start time in the APF dumps (a client between watches, or no APF dump with request details)", c.closed, keyName(c.key), c.windowText(), keyName(c.key))
	case 1:
		r := clients[0]
		f.Client = clientFrom(r.newest, api.MatchLikely)
		f.Client.Seats = r.newest.InitialSeats
		c.tie(f, r)
		f.Message = fmt.Sprintf("the server closed %d watcher(s) of %s in %s for not keeping up, and %s watched it again from the start %d time(s) in that window (%s): %s", c.closed, keyName(c.key), c.windowText(), userOf(r.newest), len(r.starts), returnCost(r, f.Closures), caughtUpText(f.Closures.CaughtUp))
		f.Message += auditAgreement(r, c.early, picked, len(c.clients))
		for _, o := range c.clients {
			f.Evidence = append(f.Evidence, returnEvidence(o)...)
		}
	default:
		pool := make([]apf.Request, len(c.clients))
		for i, r := range c.clients {
			pool[i] = r.newest
			f.Evidence = append(f.Evidence, returnEvidence(r)...)
		}
		list := newCandidateList(c.server, pool, c.b.CapturedAt, nil)
		list.apply(f)
		f.Closures.Returns = 0
		for _, r := range c.clients {
			f.Closures.Returns += len(r.starts)
		}
		f.Message = fmt.Sprintf("the server closed %d watcher(s) of %s in %s for not keeping up; one of these %d clients, whose watches of it came back with new start times, is the one (or several are): the counter is the resource's, not a client's", c.closed, keyName(c.key), c.windowText(), len(c.clients))
	}
	return f
}

// tie fills what one tied client's returns cost and whether it caught up.
func (c closure) tie(f *api.Finding, r returning) {
	f.Closures.Returns = len(r.starts)
	f.Closures.ReplaySeats = r.newest.InitialSeats
	if r.atLast {
		no := false
		f.Closures.CaughtUp = &no
	}
}

func (c closure) windowText() string {
	if c.window <= 0 {
		return "the window between the samples"
	}
	return roundDuration(c.window) + " between the samples"
}

func (c closure) counterEvidence(res string) string {
	s := fmt.Sprintf("apiserver_terminated_watchers_total{resource=%q} grew by %d between the samples (same process): the cacher closed %d watcher(s) of %s whose input buffer stayed full past the dispatch timeout (k8s.io/apiserver cache_watcher.go add; the server logs \"Forcing %s watcher close due to unresponsiveness\")", res, c.closed, c.closed, res, res)
	if len(c.reasons) > 0 {
		var parts []string
		for _, k := range sortedReasons(c.reasons) {
			parts = append(parts, fmt.Sprintf("%s %d", k, c.reasons[k]))
		}
		s += "; by reason: " + strings.Join(parts, ", ")
	}
	return s
}

func sortedReasons(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// replayEvidence is what a replay of the resource costs, where /metrics
// says: apiserver_init_events_total grows by a closed replay's whole
// snapshot, so its growth per closure bounds the objects of one replay,
// and apiserver_watch_events_sizes' mean event size gives its bytes.
func (c closure) replayEvidence(cl *api.Closures, res string) []string {
	g := counterGrowth(c.a.Metrics.InitEvents, c.b.Metrics.InitEvents, c.key)
	if g < 1 {
		return nil
	}
	perReplay := int64(math.Round(g / float64(c.closed)))
	s := fmt.Sprintf("apiserver_init_events_total{resource=%q} grew by %.0f: a replay cut by the close still counts its whole snapshot, so about %d objects per closed replay if every replay of %s in the window was a closed one", res, g, perReplay, res)
	m := c.b.Metrics
	if bytes, n := m.WatchEventBytes[c.key], m.WatchEvents[c.key]; n >= 1 && bytes > 0 && !math.IsNaN(bytes) {
		mean := bytes / n
		cl.ReplayBytes = int64(math.Round(mean * float64(perReplay)))
		s += fmt.Sprintf(", about %s each at the mean event size of %s (apiserver_watch_events_sizes)", byteSize(float64(cl.ReplayBytes)), byteSize(mean))
	}
	cl.ReplayObjects = perReplay
	return []string{s}
}

// returnCost is what each return cost, as far as known.
func returnCost(r returning, cl *api.Closures) string {
	s := fmt.Sprintf("%d APF seat(s) per replay", r.newest.InitialSeats)
	if cl.ReplayObjects > 0 {
		s += fmt.Sprintf(", about %d objects", cl.ReplayObjects)
	}
	if cl.ReplayBytes > 0 {
		s += fmt.Sprintf(" (%s)", byteSize(float64(cl.ReplayBytes)))
	}
	return s
}

// returnEvidence lists a returning client's new watch requests.
func returnEvidence(r returning) []string {
	starts := make([]string, len(r.starts))
	for i, t := range r.starts {
		starts[i] = t.UTC().Format("15:04:05.000")
	}
	return []string{fmt.Sprintf("APF dump_requests: %s's watch %s started again at %s (new start times after the first sample), %d initial seat(s), priority level %s", userOf(r.newest), r.newest.Path, strings.Join(starts, ", "), r.newest.InitialSeats, r.newest.PriorityLevel)}
}

func caughtUpText(caught *bool) string {
	if caught != nil && !*caught {
		return "it never caught up: at the last sample it was replaying the initial events again"
	}
	return "whether it caught up is not known: at the last sample it was not replaying"
}

// byteSize is v bytes in MiB or KiB, one decimal.
func byteSize(v float64) string {
	switch {
	case v >= 1<<20:
		return fmt.Sprintf("%.1f MiB", v/(1<<20))
	case v >= 1<<10:
		return fmt.Sprintf("%.1f KiB", v/(1<<10))
	}
	return fmt.Sprintf("%.0f B", v)
}

// ClosedBetween is the WatchClosedByServer findings of server between
// two samples of one instance taken apart (serve's consecutive looks):
// what closedWatches finds of the two. None when they are of different
// processes or either lacks /metrics.
func ClosedBetween(server string, prev, cur watches.Sample) []api.Finding {
	out := closedWatches(watches.Server{Name: server, Samples: []watches.Sample{prev, cur}}, nil)
	fs := make([]api.Finding, len(out.findings))
	for i, f := range out.findings {
		fs[i] = *f
	}
	return fs
}
