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
	"github.com/watch-doctor/watch-doctor/pkg/metrics"
)

// Cross-checks of the object-type evidence against /metrics
// (apiserver_longrunning_requests{verb="WATCH"} and
// apiserver_watch_events_sizes) and the connection groups of the
// findings. The metrics are read before the APF and goroutine dumps (the
// live read and collect fetch /metrics first); the checks below count only
// what was certainly there when /metrics was read, so a contradiction
// means the evidence does not hold together, never that time passed.

// scopeOf is the scope apiserver_longrunning_requests counts a request
// under: CleanScope (k8s.io/apiserver v0.37.2 metrics.go:662) reads the
// same RequestInfo the APF dump prints (a name, also from a metadata.name
// field selector, makes it "resource").
func scopeOf(r apf.Request) string {
	switch {
	case r.Name != "":
		return metrics.ScopeResource
	case r.Namespace != "":
		return metrics.ScopeNamespace
	}
	return metrics.ScopeCluster
}

// watchesServed is how many watches of the group/resource key
// apiserver_longrunning_requests counted in scope ("" for all scopes).
func watchesServed(wr map[string]map[string]float64, key, scope string) float64 {
	n := 0.0
	for s, v := range wr[key] {
		if scope == "" || s == scope {
			n += v
		}
	}
	return n
}

// contradiction checks the assignment of object types to resources that
// inferClasses allowed against apiserver_longrunning_requests: every
// initial-phase watcher runs inside its handler's RecordLongRunning
// (metrics.go:539), which counts it under its group/resource and scope
// from its start to its end. So
//   - the watchers of one object type that an earlier sample already saw
//     (there before this sample's /metrics was read) cannot outnumber the
//     watches counted for the resources that type may serve;
//   - the executing watch requests of one group/resource and scope that
//     started before /metrics was read (the manifest's time of that fetch,
//     else the capture time less the capture slack) cannot outnumber the
//     watches counted for them: they were executing then, since they
//     still are in the APF dump read after it.
//
// It returns why the counts do not hold together, "" when they do or
// when /metrics was not given.
func (m *matcher) contradiction() string {
	wr := m.in.watchRequests
	if wr == nil || !m.typesUsed {
		return ""
	}
	seen := make([]int, len(m.classes))
	for i, c := range m.wclass {
		if c == wild {
			continue
		}
		if t, ok := m.in.seenAt[m.in.watchers[i].GoroutineID]; ok && !t.IsZero() {
			seen[c]++
		}
	}
	for c, n := range seen {
		if n == 0 {
			continue
		}
		served := 0.0
		var names []string
		for r, cs := range m.allowed {
			for _, x := range cs {
				if x == c {
					served += watchesServed(wr, m.resources[r], "")
					names = append(names, keyName(m.resources[r]))
				}
			}
		}
		if float64(n) > served {
			return fmt.Sprintf("%d initial-phase watchers of object type %s were already there in the earlier sample, but apiserver_longrunning_requests{verb=\"WATCH\"} counts %s for %s", n, m.classes[c], formatCount(served), strings.Join(names, " and "))
		}
	}
	bound := m.in.metricsAt
	if bound.IsZero() {
		if m.in.at.IsZero() {
			return ""
		}
		bound = m.in.at.Add(-m.in.slack)
	}
	type rs struct{ key, scope string }
	before := map[rs]int{}
	for _, r := range m.in.reqs {
		if k := resourceKey(r); k != "" && r.StartTime.Before(bound) {
			before[rs{k, scopeOf(r)}]++
		}
	}
	keys := make([]rs, 0, len(before))
	for k := range before {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].key != keys[j].key {
			return keys[i].key < keys[j].key
		}
		return keys[i].scope < keys[j].scope
	})
	for _, k := range keys {
		if served := watchesServed(wr, k.key, k.scope); float64(before[k]) > served {
			return fmt.Sprintf("the APF dump lists %d executing watch requests of %s in scope %s that started before /metrics was read, but apiserver_longrunning_requests{verb=\"WATCH\"} counts %s", before[k], keyName(k.key), k.scope, formatCount(served))
		}
	}
	return ""
}

// dropTypes stops using the object types: every watcher may take any
// request old enough for it.
func (m *matcher) dropTypes() {
	all := m.allClasses()
	for r := range m.allowed {
		m.allowed[r] = all
	}
	for i := range m.wclass {
		m.wclass[i] = wild
	}
	m.typesUsed = false
}

// keyName spells a "group/resource" key as kubectl does: "pods",
// "deployments.apps".
func keyName(key string) string {
	g, r, _ := strings.Cut(key, "/")
	if g == "" {
		return r
	}
	return r + "." + g
}

func formatCount(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%d", int64(v))
	}
	return fmt.Sprintf("%g", v)
}

// metricsEvidence says what /metrics adds to a finding's attribution, for
// the group/resource its client is known to watch (attributed, or shared
// by every candidate):
//   - how many watches of it apiserver_longrunning_requests counts, per
//     scope;
//   - whether apiserver_watch_events_sizes has counted events of the size
//     its handler is writing. That corroborates; it cannot contradict: an
//     event is counted only once written in full (RecordEvent, watch.go:450 and 240), and a
//     handler stuck in its first event of a size has written none.
func metricsEvidence(f *api.Finding, m *watches.MetricsContext) []string {
	if m == nil || f.Client == nil || f.Client.Resource == "" || f.Client.Path == "" {
		return nil
	}
	key := apiGroup(f.Client.Path) + "/" + f.Client.Resource
	name := keyName(key)
	var out []string
	if m.WatchRequests != nil {
		var parts []string
		for _, s := range []string{metrics.ScopeCluster, metrics.ScopeNamespace, metrics.ScopeResource} {
			if v, ok := m.WatchRequests[key][s]; ok && v > 0 {
				parts = append(parts, fmt.Sprintf("%s %s", s, formatCount(v)))
			}
		}
		total := watchesServed(m.WatchRequests, key, "")
		detail := ""
		if len(parts) > 0 {
			detail = " (" + strings.Join(parts, ", ") + ")"
		}
		out = append(out, fmt.Sprintf("/metrics: apiserver_longrunning_requests{verb=\"WATCH\"} counts %s watches of %s%s", formatCount(total), name, detail))
	}
	h := f.Watcher.Handler
	if h == nil || h.EventBytes == 0 || m.EventSizes == nil {
		return out
	}
	lo, hi, n := bucketOf(m.EventSizes[key], float64(h.EventBytes))
	switch {
	case n > 0:
		out = append(out, fmt.Sprintf("the handler writes an event of %d bytes; apiserver_watch_events_sizes has counted %s %s events of %s: consistent", h.EventBytes, formatCount(n), name, sizeRange(lo, hi)))
	default:
		out = append(out, fmt.Sprintf("the handler writes an event of %d bytes; apiserver_watch_events_sizes has counted no %s event of %s yet: not corroborated, not contradicted (an event is counted once written in full, and a handler stuck in its first event of a size has written none)", h.EventBytes, name, sizeRange(lo, hi)))
	}
	return out
}

// bucketOf finds the bucket (lo, hi] of cumulative buckets bs holding
// size, and how many observations fell in it.
func bucketOf(bs []metrics.SizeBucket, size float64) (lo, hi, n float64) {
	prev := metrics.SizeBucket{}
	for _, b := range bs {
		if size <= b.UpperBound {
			return prev.UpperBound, b.UpperBound, b.Count - prev.Count
		}
		prev = b
	}
	return prev.UpperBound, math.Inf(1), 0
}

func sizeRange(lo, hi float64) string {
	if math.IsInf(hi, 1) {
		return "over " + byteText(lo)
	}
	return byteText(lo) + " to " + byteText(hi)
}

func byteText(v float64) string {
	if v >= 1024 && math.Mod(v, 1024) == 0 {
		return fmt.Sprintf("%d KiB", int64(v)/1024)
	}
	return fmt.Sprintf("%d B", int64(v))
}

// resourceKey is the group/resource an APF request names ("" without
// request details): requests of one group/resource are served by handlers
// showing the same object type.
func resourceKey(r apf.Request) string {
	if r.Resource == "" {
		return ""
	}
	return apiGroup(r.Path) + "/" + r.Resource
}

// apiGroup is the API group of a request path: "" for the core group
// (/api/v1/...), the segment after /apis/ otherwise.
func apiGroup(path string) string {
	rest, ok := strings.CutPrefix(path, "/apis/")
	if !ok {
		return ""
	}
	g, _, _ := strings.Cut(rest, "/")
	return g
}

// seenAt maps the initial-phase watchers of prev that are still in their
// initial phase in cur (same goroutine id, same *cacheWatcher when the
// dumps print it) to prev's capture time: their requests were executing
// then. nil without an earlier timed sample.
func seenAt(cur watches.Sample, prev *watches.Sample) map[int64]time.Time {
	if prev == nil || prev.Dump == nil || prev.CapturedAt.IsZero() || cur.CapturedAt.IsZero() || !prev.CapturedAt.Before(cur.CapturedAt) {
		return nil
	}
	before := make(map[int64]api.Watcher, len(prev.Dump.Watchers))
	for _, w := range prev.Dump.Watchers {
		if w.Phase == api.PhaseInitial {
			before[w.GoroutineID] = w
		}
	}
	out := map[int64]time.Time{}
	for _, w := range cur.Dump.Watchers {
		p, ok := before[w.GoroutineID]
		if !ok || w.Phase != api.PhaseInitial || (p.CacheWatcher != "" && w.CacheWatcher != "" && p.CacheWatcher != w.CacheWatcher) {
			continue
		}
		out[w.GoroutineID] = prev.CapturedAt
	}
	return out
}
