package replay

import (
	"fmt"
	"strconv"

	"github.com/watch-doctor/watch-doctor/internal/english"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// CompareColumns lists every difference between two columns of one replay:
// per client, the outcome, when it was stopped or disconnected, the events
// and bookmarks it received, when it had its initial events, its last
// progress, the window updates it sent, its APF seat-seconds, and its
// closures and returns with their seat-seconds; per column, the same sums,
// the goroutines left (blocked watchers, watchers alive, handlers
// blocked in a write), the object versions and bytes the blocked watchers
// hold, the APF seat-seconds and each resource's counters (watchers the
// dispatcher terminated, initial events sent, watchers the stall timeout
// stopped). It leaves out only the column's name. Nil means identical.
//
// The fidelity verdict and the differential suite (internal/replay/upstream)
// compare upstream with unpatched through it.
func CompareColumns(a, b *api.Column) []string {
	var out []string
	differ := func(what string, x, y string) {
		if x != y {
			out = append(out, fmt.Sprintf("%s: %s in %s, %s in %s", what, x, a.Name, y, b.Name))
		}
	}
	for _, f := range columnFields {
		differ(f.name, f.value(a), f.value(b))
	}
	if len(a.Counters) != len(b.Counters) {
		differ("resources counted", strconv.Itoa(len(a.Counters)), strconv.Itoa(len(b.Counters)))
	} else {
		for i := range a.Counters {
			x, y := a.Counters[i], b.Counters[i]
			differ("counters resource", x.Resource, y.Resource)
			differ(x.Resource+" terminated watchers", i64(x.TerminatedWatchers), i64(y.TerminatedWatchers))
			differ(x.Resource+" init events", i64(x.InitEvents), i64(y.InitEvents))
			differ(x.Resource+" stalled watchers", i64(x.StalledWatchers), i64(y.StalledWatchers))
		}
	}
	if len(a.Clients) != len(b.Clients) {
		differ("clients", strconv.Itoa(len(a.Clients)), strconv.Itoa(len(b.Clients)))
		return out
	}
	for i := range a.Clients {
		x, y := &a.Clients[i], &b.Clients[i]
		if x.Name != y.Name {
			differ(fmt.Sprintf("client #%d", i+1), x.Name, y.Name)
			continue
		}
		differ(x.Name, describe(*x), describe(*y))
		for _, f := range clientFields {
			differ(x.Name+" "+f.name, f.value(x), f.value(y))
		}
	}
	return out
}

type field[T any] struct {
	name  string
	value func(T) string
}

// columnFields are the per-column figures CompareColumns compares.
var columnFields = []field[*api.Column]{
	{"blocked goroutines", func(c *api.Column) string { return strconv.Itoa(c.BlockedGoroutines) }},
	{"watcher goroutines", func(c *api.Column) string { return strconv.Itoa(c.WatcherGoroutines) }},
	{"handlers blocked in write", func(c *api.Column) string { return strconv.Itoa(c.HandlersBlockedInWrite) }},
	{"held objects", func(c *api.Column) string { return strconv.Itoa(c.HeldObjects) }},
	{"held bytes", func(c *api.Column) string { return i64(c.HeldBytes) }},
	{"APF seat-seconds", func(c *api.Column) string { return exact(c.APFSeatSeconds) }},
	{"closures", func(c *api.Column) string { return strconv.Itoa(c.Closures) }},
	{"returns", func(c *api.Column) string { return strconv.Itoa(c.Returns) }},
	{"returns' APF seat-seconds", func(c *api.Column) string { return exact(c.ReturnSeatSeconds) }},
}

// clientFields are the per-client figures CompareColumns compares besides
// the outcome (which describe covers, with the stop or disconnect time).
var clientFields = []field[*api.ClientResult]{
	{"model", func(c *api.ClientResult) string { return c.Model }},
	{"scope", func(c *api.ClientResult) string { return c.Scope }},
	{"start", func(c *api.ClientResult) string { return exact(c.StartSeconds) + "s" }},
	{"stopped after", func(c *api.ClientResult) string { return optSeconds(c.StoppedAfterSeconds) }},
	{"events received", func(c *api.ClientResult) string { return i64(c.EventsReceived) }},
	{"bookmarks received", func(c *api.ClientResult) string { return i64(c.BookmarksReceived) }},
	{"initial events", func(c *api.ClientResult) string { return strconv.Itoa(c.InitialEvents) }},
	{"initial events done at", func(c *api.ClientResult) string { return optSeconds(c.InitialDoneAtSeconds) }},
	{"last progress", func(c *api.ClientResult) string { return optSeconds(c.LastProgressSeconds) }},
	{"longest no-progress gap", func(c *api.ClientResult) string { return optSeconds(c.LongestNoProgressSeconds) }},
	{"window updates", func(c *api.ClientResult) string { return i64(c.WindowUpdates) }},
	{"APF seat-seconds", func(c *api.ClientResult) string { return exact(c.APFSeatSeconds) }},
	{"closures", func(c *api.ClientResult) string { return strconv.Itoa(c.Closures) }},
	{"returns", func(c *api.ClientResult) string { return strconv.Itoa(c.Returns) }},
	{"returns' APF seat-seconds", func(c *api.ClientResult) string { return exact(c.ReturnSeatSeconds) }},
}

func i64(n int64) string { return strconv.FormatInt(n, 10) }

// exact writes f in full: the comparison must not round.
func exact(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func optSeconds(f *float64) string {
	if f == nil {
		return "-"
	}
	return "t=" + exact(*f) + "s"
}

// describe says how a client ended, with the time for stopped and
// disconnected.
func describe(c api.ClientResult) string {
	switch {
	case c.Outcome == api.OutcomeStopped && c.StoppedAtSeconds != nil:
		return fmt.Sprintf("stopped at t=%ss", english.Number(*c.StoppedAtSeconds))
	case c.Outcome == api.OutcomeDisconnected && c.DisconnectedAtSeconds != nil:
		return fmt.Sprintf("disconnected at t=%ss", english.Number(*c.DisconnectedAtSeconds))
	}
	return string(c.Outcome)
}
