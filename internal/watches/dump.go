package watches

import (
	"fmt"
	"sort"
	"time"

	"github.com/watch-doctor/watch-doctor/pkg/apf"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/metrics"
	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

// FuncCount is how many goroutines have Func as their innermost frame.
type FuncCount struct {
	Func  string `json:"func"`
	Count int    `json:"count"`
}

// Dump formats.
const (
	FormatDebug2   = "debug=2"
	FormatDebug1   = "debug=1"
	FormatProtobuf = "protobuf"
)

// Dump is what the diagnosis keeps of one goroutine dump.
type Dump struct {
	Format     string `json:"format"`
	Goroutines int    `json:"goroutines"`
	// MaxGoroutineID is the highest goroutine id (debug=2): ids only grow
	// in a process, so it orders samples of one process without times.
	MaxGoroutineID int64 `json:"maxGoroutineID,omitempty"`
	// Watchers are the cacheWatcher goroutines (debug=2 only), by id.
	Watchers []api.Watcher `json:"watchers,omitempty"`
	// PhaseCounts replace Watchers for aggregated formats.
	PhaseCounts []api.PhaseCount `json:"phaseCounts,omitempty"`
	// ClientNotReading counts watch handlers blocked writing to their
	// client (aggregated formats).
	ClientNotReading int            `json:"clientNotReading,omitempty"`
	ByState          map[string]int `json:"byState,omitempty"`
	TopFuncs         []FuncCount    `json:"topFuncs,omitempty"`
	// HasParentIDs is false for dumps written by Go < 1.21, whose
	// "created by" lines do not name the parent goroutine.
	HasParentIDs bool `json:"hasParentIDs"`
	// Held are watch handlers blocked writing that still hold APF seats
	// with no watcher goroutine left (debug=2 with parent ids only).
	Held []HeldHandler `json:"held,omitempty"`
	// CacheWaits are watch handlers waiting in (*Cacher).Watch for a watch
	// cache that is not ready (debug=2 only).
	CacheWaits []CacheWait `json:"cacheWaits,omitempty"`
	// Unrecognised counts the goroutines (*Cacher).Watch created that are
	// not watchers of a shape this build knows (a newer release's watcher
	// loop): their watches are not decided.
	Unrecognised int `json:"unrecognised,omitempty"`
	// Notes say what could not be read or linked.
	Notes []string `json:"notes,omitempty"`
	// Warnings are what a reader must see in any output: skipped lines.
	Warnings []string `json:"warnings,omitempty"`
	// Partial says why the dump is known to be cut ("" when it looks
	// whole): its goroutines are decided, the missing ones are not.
	Partial string `json:"partial,omitempty"`
	// APIServer reports whether any goroutine (any stack of an aggregated
	// profile) runs k8s.io/apiserver code, as every kube-apiserver dump
	// does: without it the dump may be another process's, and "no watch
	// stuck" would be wrong of it.
	APIServer bool `json:"apiServer"`
}

// Aggregated reports whether the dump carries counts, not goroutines.
func (d *Dump) Aggregated() bool { return d.Format != FormatDebug2 }

// Dump links what the Collector kept into watchers. stats are the
// scanner's, for notes about skipped lines and parent ids.
func (c *Collector) Dump(stats stacks.Stats) *Dump {
	d := &Dump{
		Format:         FormatDebug2,
		Goroutines:     c.total,
		MaxGoroutineID: c.maxID,
		ByState:        c.byState.snapshot(),
		TopFuncs:       topFuncs(c.byTopFunc.snapshot(), 10),
		HasParentIDs:   stats.HasParentIDs(),
		APIServer:      c.apiServer,
	}
	if !d.HasParentIDs {
		d.Notes = append(d.Notes, "the dump was written by Go < 1.21: \"created by\" lines name no parent goroutine, so watchers cannot be linked to their handlers, APF goroutines or connections")
	}
	if stats.SkippedLines > 0 {
		d.Warnings = append(d.Warnings, fmt.Sprintf("%d unknown lines skipped in the goroutine dump (first at line %d: %s)", stats.SkippedLines, stats.Skipped[0].Line, stats.Skipped[0].Reason))
	}
	d.Partial = stats.Partial
	c.countConnWatches()
	for _, wg := range c.watchers {
		w := wg.watcher()
		if h, ok := c.handlers[wg.ParentID]; ok && wg.ParentID != 0 {
			hd := c.handler(h)
			w.Handler = &hd
			if a, ok := c.apf[h.ID]; ok {
				w.APFGoroutineID = a.ID
			}
		}
		d.Watchers = append(d.Watchers, w)
	}
	sort.Slice(d.Watchers, func(i, j int) bool { return d.Watchers[i].GoroutineID < d.Watchers[j].GoroutineID })
	d.Held = c.heldHandlers(d.HasParentIDs)
	for _, n := range c.unrecognised {
		d.Unrecognised += n
	}
	d.CacheWaits = c.cacheWaits(d.HasParentIDs)
	return d
}

// countConnWatches counts the watch handlers of each connection.
func (c *Collector) countConnWatches() {
	c.connWatches = map[int64]int{}
	for _, h := range c.handlers {
		if h.ConnID != 0 {
			c.connWatches[h.ConnID]++
		}
	}
}

// handler is the Handler of a classified handler goroutine; Dump counts
// the connections' watches first.
func (c *Collector) handler(h handlerG) api.Handler {
	return api.Handler{
		GoroutineID: h.ID, State: h.State, WaitMinutes: h.WaitMinutes, Block: h.Block,
		ConnGoroutineID: h.ConnID, ConnInDump: c.conns[h.ConnID],
		ObjectType: h.ObjectType, Transport: h.Transport,
		EventBytes: h.EventBytes, ConnAddress: h.ConnAddress, ConnWatches: c.connWatches[h.ConnID],
	}
}

func topFuncs(m map[string]int, n int) []FuncCount {
	out := make([]FuncCount, 0, len(m))
	for f, c := range m {
		out = append(out, FuncCount{Func: f, Count: c})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Func < out[j].Func
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// FromAggregated counts the watchers of a debug=1 or protobuf dump. Those
// formats hold no goroutine ids and no waits, so watchers can be counted
// per phase but not judged stuck.
func FromAggregated(a *stacks.Aggregated, format string) *Dump {
	d := &Dump{Format: format, Goroutines: a.Total, HasParentIDs: false}
	counts := map[api.PhaseCount]int{}
	tops := map[string]int{}
	var n names
	var buf []role
	for _, as := range a.Stacks {
		tops[stacks.TopFunc(as.Frames)] += as.Count
		if len(as.Frames) == 0 {
			continue
		}
		if !d.APIServer {
			d.APIServer = hasAPIServerFrame(as.Frames)
		}
		st := n.stackOf(as.Frames, buf)
		buf = st.roles
		if st.isWatcher() {
			w := classifyWatcher(goroutineRef{}, st)
			counts[api.PhaseCount{Phase: w.Phase, InSend: w.InSend}] += as.Count
			continue
		}
		if i, ok := st.has(roleWatchServe); ok && blockedWriting(st.sub(i), "") {
			d.ClientNotReading += as.Count
		}
	}
	for k, v := range counts {
		k.Count = v
		d.PhaseCounts = append(d.PhaseCounts, k)
	}
	sort.Slice(d.PhaseCounts, func(i, j int) bool {
		a, b := d.PhaseCounts[i], d.PhaseCounts[j]
		if a.Phase != b.Phase {
			return a.Phase < b.Phase
		}
		return a.InSend && !b.InSend
	})
	d.TopFuncs = topFuncs(tops, 10)
	d.Notes = append(d.Notes, fmt.Sprintf("a %s dump carries no goroutine ids and no waits: watchers are counted per phase, but whether one is stuck cannot be decided from this format; capture /debug/pprof/goroutine?debug=2", format))
	if a.SkippedLines > 0 {
		d.Warnings = append(d.Warnings, fmt.Sprintf("%d unknown lines skipped in the goroutine dump (first at line %d: %s)", a.SkippedLines, a.Skipped[0].Line, a.Skipped[0].Reason))
	}
	return d
}

// Sample is what was captured of one API server at one time. Any part may
// be missing.
type Sample struct {
	// Source names where the sample came from (a directory, a URL), for
	// messages.
	Source string
	// CapturedAt is when the goroutine dump was taken; zero when unknown.
	CapturedAt time.Time
	// MetricsAt is when /metrics was read, on the server's clock when
	// known; zero when unknown (then CapturedAt less the capture slack
	// stands for it).
	MetricsAt time.Time
	Dump      *Dump
	Requests  *apf.Requests
	Levels    []apf.PriorityLevel
	Metrics   *MetricsContext
	// Mixed says why the sample's dumps may come from different
	// processes (read through a load balancer): clients are then matched
	// as ambiguous at best.
	Mixed string
	// Withheld says why no debug=2 dump was taken and what it would have
	// cost ("a dump would stop this server for about 1.2 s"); empty when
	// none was withheld.
	Withheld string
	// ProfileStatus is the HTTP status /debug/pprof refused the goroutine
	// profiles with: 404 (profiling disabled) or 403 (RBAC); 0 when they
	// were served, not asked for, or unknown (api.Sample.ProfileStatus).
	ProfileStatus int
}

// MetricsContext is what the diagnosis uses of /metrics.
type MetricsContext struct {
	Goroutines          *float64
	ResidentMemoryBytes *float64
	ProcessStartTime    *float64
	// Levels maps a priority level to its executing seats and seat limit.
	Levels             map[string]LevelSeats
	WatchersByResource []api.ResourceCount
	// WatchRequests is apiserver_longrunning_requests{verb="WATCH"} per
	// "group/resource" and scope (metrics.WatchRequests); nil when absent.
	WatchRequests map[string]map[string]float64
	// EventSizes is apiserver_watch_events_sizes per "group/resource"
	// (metrics.EventSizeBuckets); nil when absent.
	EventSizes map[string][]metrics.SizeBucket
	// WatchEvents is apiserver_watch_events_total per "group/resource";
	// nil when absent. Its growth between two samples says whether any
	// handler of a resource wrote an event (the trace route's elimination).
	WatchEvents map[string]float64
	// WatchEventBytes is the sum of apiserver_watch_events_sizes per
	// "group/resource": the bytes of the events counted in WatchEvents;
	// nil when absent.
	WatchEventBytes map[string]float64
	// InitEvents and TerminatedWatchers are apiserver_init_events_total
	// and apiserver_terminated_watchers_total per "group/resource" (summed
	// over any other label); nil when absent.
	InitEvents, TerminatedWatchers map[string]float64
	// TerminatedReasons is apiserver_terminated_watchers_total per
	// "group/resource" and reason label ("" on servers without one:
	// metrics.TerminatedByReason); nil when absent.
	TerminatedReasons map[string]map[string]float64
}

// LevelSeats is one priority level's seat use from metrics.
type LevelSeats struct {
	Executing *float64
	Limit     *float64
}

// Server is one API server instance and its samples, oldest first.
type Server struct {
	Name    string
	Version string
	Samples []Sample
	Notes   []string
	// Trace is the server's execution trace, taken between its first and
	// last samples (ReadTrace); nil when none was taken.
	Trace *Trace
}

// InSend counts the watchers of counts, as FromAggregated made them,
// blocked sending an event: those of the initial phase (the replay) and
// the others. The live sampler reads a profile once (ReadProfile) and
// keeps its counts, and decides from them with this alone.
func InSend(counts []api.PhaseCount) (initial, other int) {
	for _, pc := range counts {
		switch {
		case !pc.InSend:
		case pc.Phase == api.PhaseInitial:
			initial += pc.Count
		default:
			other += pc.Count
		}
	}
	return initial, other
}
