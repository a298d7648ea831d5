package metrics

// This file is the name/label mapping, kept as data: which family carries
// each watch metric in each release 1.30 to 1.37, with which labels.
//
// Every entry was read from the k8s.io/apiserver source of the release named
// in releases (release.go), in the module cache; file:line references are to
// that module. The facts files testdata/upstream/v1.NN.txt hold every metric
// definition of the three upstream packages per release, and
// TestCatalogPerRelease checks this table against them, one subtest per
// release. Changes found across 1.30 to 1.37:
//
//   - 1.31: apiserver_watch_cache_resource_version is new
//     (v0.31.14 pkg/storage/cacher/metrics/metrics.go:113).
//   - 1.34: every watch-cache metric changes its label "resource" (which held
//     schema.GroupResource.String(), "deployments.apps") into the two labels
//     "group","resource" (v0.33.13 metrics.go:74 -> v0.34.13 metrics.go:75 for
//     apiserver_init_events_total, likewise for the others; the values come
//     from c.groupResource.String() at v0.33.13 cache_watcher.go:506 and from
//     .Group, .Resource at v0.34.13 cache_watcher.go:506).
//   - 1.34: apiserver_watch_events_total and apiserver_watch_events_sizes
//     change label "kind" (a Kind such as "Pod", v0.33.13
//     endpoints/metrics/metrics.go:179,189) into "resource" (v0.34.13
//     metrics.go:179,189; values from gvr at handlers/watch.go:272-273).
//   - 1.36: apiserver_watch_list_duration_seconds becomes BETA
//     (v0.36.6 endpoints/metrics/metrics.go:292), and the HELP of
//     apiserver_watch_cache_resource_version says the value is truncated to
//     15 digits (v0.36.6 cacher/metrics/metrics.go:117).
//   - 1.37: apiserver_watch_events_total and apiserver_watch_events_sizes
//     become BETA (v0.37.2 endpoints/metrics/metrics.go:160,170);
//     apiserver_flowcontrol_request_concurrency_limit and
//     apiserver_flowcontrol_request_concurrency_in_use (deprecated since
//     1.30.0 and 1.31.0, hidden by default since then) are removed.
//   - Never in 1.30 to 1.37: apiserver_registered_watchers. Its last
//     definition is v0.24.1 pkg/endpoints/metrics/metrics.go:169
//     (deprecated 1.23.0, labels group,version,kind); v0.25.4 has none.
//   - Unchanged throughout: watch_cache_capacity keeps no "apiserver_" prefix
//     (Subsystem "watch_cache" without Namespace, v0.37.2
//     cacher/metrics/metrics.go:181-182); apiserver_longrunning_requests,
//     the flowcontrol seat gauges, and the process collectors.

import "sort"

// Scheme says how a family's labels name the thing it counts.
type Scheme int

// The label schemes found in 1.30 to 1.37 (and 1.24 for registered watchers).
const (
	// ByNothing: a process-wide value without labels (go_goroutines).
	ByNothing Scheme = iota
	// ByGroupResource: labels group="apps", resource="deployments".
	ByGroupResource
	// ByResourceString: one label resource="deployments.apps", the
	// schema.GroupResource.String() form (watch cache metrics before 1.34).
	ByResourceString
	// ByGroupVersionKind: labels group, version, kind="Deployment".
	ByGroupVersionKind
	// ByGroupVersionResource: labels group, version, resource.
	ByGroupVersionResource
	// ByRequest: apiserver_longrunning_requests' labels (verb, group,
	// version, resource, subresource, scope, component); only verb="WATCH"
	// counts.
	ByRequest
	// ByPriorityLevel: priority_level (and flow_schema, summed over).
	ByPriorityLevel
)

var schemeNames = map[Scheme]string{
	ByNothing:              "none",
	ByGroupResource:        "group,resource",
	ByResourceString:       "resource=<resource>.<group>",
	ByGroupVersionKind:     "group,version,kind",
	ByGroupVersionResource: "group,version,resource",
	ByRequest:              "verb,group,version,resource,subresource,scope,component",
	ByPriorityLevel:        "priority_level",
}

// String names the scheme by its labels.
func (s Scheme) String() string { return schemeNames[s] }

// MetricID names one watch metric independently of how a release spells it.
type MetricID string

// The metrics watch-doctor reads.
const (
	Watchers              MetricID = "watchers"
	RegisteredWatchers    MetricID = "registeredWatchers"
	InitEvents            MetricID = "initEvents"
	TerminatedWatchers    MetricID = "terminatedWatchers"
	WatchEvents           MetricID = "watchEvents"
	WatchEventSizes       MetricID = "watchEventSizes"
	CacheEventsReceived   MetricID = "eventsReceived"
	CacheEventsDispatched MetricID = "eventsDispatched"
	CacheResourceVersion  MetricID = "cacheResourceVersion"
	CacheInitializations  MetricID = "cacheInitializations"
	CacheCapacity         MetricID = "cacheCapacity"
	WatchListDuration     MetricID = "watchListDuration"
	ExecutingSeats        MetricID = "executingSeats"
	LimitSeats            MetricID = "limitSeats"
	ExecutingRequests     MetricID = "executingRequests"
	Goroutines            MetricID = "goroutines"
	ResidentMemory        MetricID = "residentMemoryBytes"
	ProcessStartTime      MetricID = "processStartTime"
)

// Variant is one spelling of a metric, valid for a range of releases.
type Variant struct {
	// Name is the family name in the exposition.
	Name string
	// Type is "counter", "gauge" or "histogram".
	Type string
	// Labels are the label names in the order the source declares them.
	Labels []string
	// Scheme is how Labels name a resource or priority level.
	Scheme Scheme
	// Since and Until bound the releases that define this variant, both
	// inclusive; a zero Since means "before the catalog", a zero Until
	// "still current".
	Since, Until Release
	// Stability is the level the HELP text is prefixed with ([ALPHA] ...)
	// at Since; StabilityChanges lists later promotions.
	Stability string
	// StabilityChanges maps a release to the level it promoted this variant to.
	StabilityChanges map[Release]string
	// Fallback variants are deprecated aliases, read only when no primary
	// variant of the metric is in the sample.
	Fallback bool
	// Source is file:line of the definition at Since (or at the newest
	// release that has it), in that release's k8s.io/apiserver module.
	Source string
}

// In reports whether the variant is defined in release r.
func (v Variant) In(r Release) bool {
	if !v.Since.IsZero() && r.Compare(v.Since) < 0 {
		return false
	}
	if !v.Until.IsZero() && r.Compare(v.Until) > 0 {
		return false
	}
	return true
}

// StabilityIn returns the stability level the variant has in release r.
func (v Variant) StabilityIn(r Release) string {
	level := v.Stability
	var best Release
	for rel, l := range v.StabilityChanges {
		if r.Compare(rel) >= 0 && rel.Compare(best) > 0 {
			best, level = rel, l
		}
	}
	return level
}

// Metric is one watch metric and its spellings across releases.
type Metric struct {
	ID MetricID
	// Use says what watch-doctor reads from it.
	Use string
	// Variants, oldest first.
	Variants []Variant
	// Absent explains a metric that no catalog release defines.
	Absent string
}

// VariantsIn returns the primary variants (not fallbacks) defined in r.
func (m Metric) VariantsIn(r Release) []Variant {
	var out []Variant
	for _, v := range m.Variants {
		if !v.Fallback && v.In(r) {
			out = append(out, v)
		}
	}
	return out
}

// Names returns every family name the metric has had.
func (m Metric) Names() []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range m.Variants {
		if !seen[v.Name] {
			seen[v.Name] = true
			out = append(out, v.Name)
		}
	}
	return out
}

var (
	gr   = []string{"group", "resource"}
	rs   = []string{"resource"}
	gvk  = []string{"group", "version", "kind"}
	gvr  = []string{"group", "version", "resource"}
	r131 = Release{1, 31}
	r133 = Release{1, 33}
	r134 = Release{1, 34}
	r136 = Release{1, 36}
	r137 = Release{1, 37}
)

// watchCacheVariants is the 1.34 label change shared by the watch cache
// metrics: resource="<resource>.<group>" until 1.33, group,resource since.
func watchCacheVariants(name, typ string, since Release, srcOld, srcNew string) []Variant {
	return []Variant{
		{Name: name, Type: typ, Labels: rs, Scheme: ByResourceString, Since: since, Until: r133, Stability: "ALPHA", Source: srcOld},
		{Name: name, Type: typ, Labels: gr, Scheme: ByGroupResource, Since: r134, Stability: "ALPHA", Source: srcNew},
	}
}

var catalog = []Metric{
	{
		ID:  Watchers,
		Use: "open watches per resource: the WATCH requests the HTTP layer is serving, stuck ones included",
		Variants: []Variant{{
			Name: "apiserver_longrunning_requests", Type: "gauge", Scheme: ByRequest,
			Labels:    []string{"verb", "group", "version", "resource", "subresource", "scope", "component"},
			Stability: "STABLE", Source: "v0.30.14 pkg/endpoints/metrics/metrics.go:90",
		}},
	},
	{
		ID:  RegisteredWatchers,
		Use: "watchers per kind, from the watch handler (old servers only)",
		Variants: []Variant{{
			Name: "apiserver_registered_watchers", Type: "gauge", Labels: gvk, Scheme: ByGroupVersionKind,
			Until: Release{1, 24}, Stability: "ALPHA",
			Source: "v0.24.1 pkg/endpoints/metrics/metrics.go:169 (deprecated 1.23.0; none in v0.25.4)",
		}},
		Absent: "not defined by kube-apiserver 1.25 to 1.37; watchers come from apiserver_longrunning_requests{verb=\"WATCH\"}",
	},
	{
		ID:  InitEvents,
		Use: "initial events the watch cache replayed, added when a watch's replay ends",
		Variants: watchCacheVariants("apiserver_init_events_total", "counter", Release{},
			"v0.30.14 pkg/storage/cacher/metrics/metrics.go:70", "v0.34.13 pkg/storage/cacher/metrics/metrics.go:71"),
	},
	{
		ID:  TerminatedWatchers,
		Use: "watchers the cacher closed because their input buffer stayed full",
		Variants: watchCacheVariants("apiserver_terminated_watchers_total", "counter", Release{},
			"v0.30.14 pkg/storage/cacher/metrics/metrics.go:102", "v0.34.13 pkg/storage/cacher/metrics/metrics.go:103"),
	},
	{
		ID:  WatchEvents,
		Use: "events the watch handlers wrote to clients",
		Variants: []Variant{
			{Name: "apiserver_watch_events_total", Type: "counter", Labels: gvk, Scheme: ByGroupVersionKind, Until: r133, Stability: "ALPHA", Source: "v0.30.14 pkg/endpoints/metrics/metrics.go:175"},
			{Name: "apiserver_watch_events_total", Type: "counter", Labels: gvr, Scheme: ByGroupVersionResource, Since: r134, Stability: "ALPHA", StabilityChanges: map[Release]string{r137: "BETA"}, Source: "v0.34.13 pkg/endpoints/metrics/metrics.go:175"},
		},
	},
	{
		ID:  WatchEventSizes,
		Use: "bytes of the events the watch handlers wrote (histogram sum and count)",
		Variants: []Variant{
			{Name: "apiserver_watch_events_sizes", Type: "histogram", Labels: gvk, Scheme: ByGroupVersionKind, Until: r133, Stability: "ALPHA", Source: "v0.30.14 pkg/endpoints/metrics/metrics.go:184"},
			{Name: "apiserver_watch_events_sizes", Type: "histogram", Labels: gvr, Scheme: ByGroupVersionResource, Since: r134, Stability: "ALPHA", StabilityChanges: map[Release]string{r137: "BETA"}, Source: "v0.34.13 pkg/endpoints/metrics/metrics.go:184"},
		},
	},
	{
		ID:  CacheEventsReceived,
		Use: "events the watch cache received from etcd",
		Variants: watchCacheVariants("apiserver_watch_cache_events_received_total", "counter", Release{},
			"v0.30.14 pkg/storage/cacher/metrics/metrics.go:81", "v0.34.13 pkg/storage/cacher/metrics/metrics.go:82"),
	},
	{
		ID:  CacheEventsDispatched,
		Use: "events the cacher's dispatch loop processed (once per event, not per watcher)",
		Variants: watchCacheVariants("apiserver_watch_cache_events_dispatched_total", "counter", Release{},
			"v0.30.14 pkg/storage/cacher/metrics/metrics.go:92", "v0.34.13 pkg/storage/cacher/metrics/metrics.go:93"),
	},
	{
		ID:  CacheResourceVersion,
		Use: "the watch cache's resource version",
		Variants: watchCacheVariants("apiserver_watch_cache_resource_version", "gauge", r131,
			"v0.31.14 pkg/storage/cacher/metrics/metrics.go:113", "v0.34.13 pkg/storage/cacher/metrics/metrics.go:114"),
	},
	{
		ID:  CacheInitializations,
		Use: "times the watch cache was (re)initialized",
		Variants: watchCacheVariants("apiserver_watch_cache_initializations_total", "counter", Release{},
			"v0.30.14 pkg/storage/cacher/metrics/metrics.go:143", "v0.34.13 pkg/storage/cacher/metrics/metrics.go:155"),
	},
	{
		ID:  CacheCapacity,
		Use: "watch cache capacity (events kept per resource)",
		Variants: watchCacheVariants("watch_cache_capacity", "gauge", Release{},
			"v0.30.14 pkg/storage/cacher/metrics/metrics.go:132", "v0.34.13 pkg/storage/cacher/metrics/metrics.go:144"),
	},
	{
		ID:  WatchListDuration,
		Use: "completed watch-list (sendInitialEvents) requests: count and seconds",
		Variants: []Variant{{
			Name: "apiserver_watch_list_duration_seconds", Type: "histogram", Scheme: ByGroupVersionResource,
			Labels: []string{"group", "version", "resource", "scope"}, Stability: "ALPHA",
			StabilityChanges: map[Release]string{r136: "BETA"},
			Source:           "v0.30.14 pkg/endpoints/metrics/metrics.go:291",
		}},
	},
	{
		ID:  ExecutingSeats,
		Use: "APF seats held by executing requests (a WATCH holds its seats only in its initial phase)",
		Variants: []Variant{
			{Name: "apiserver_flowcontrol_current_executing_seats", Type: "gauge", Labels: []string{"priority_level", "flow_schema"}, Scheme: ByPriorityLevel, Stability: "BETA", Source: "v0.30.14 pkg/util/flowcontrol/metrics/metrics.go:260"},
			{Name: "apiserver_flowcontrol_request_concurrency_in_use", Type: "gauge", Labels: []string{"priority_level", "flow_schema"}, Scheme: ByPriorityLevel, Until: r136, Stability: "ALPHA", Fallback: true, Source: "v0.30.14 pkg/util/flowcontrol/metrics/metrics.go:270 (deprecated 1.31.0)"},
		},
	},
	{
		ID:  LimitSeats,
		Use: "APF nominal seat limit of each priority level",
		Variants: []Variant{
			{Name: "apiserver_flowcontrol_nominal_limit_seats", Type: "gauge", Labels: []string{"priority_level"}, Scheme: ByPriorityLevel, Stability: "BETA", Source: "v0.30.14 pkg/util/flowcontrol/metrics/metrics.go:348"},
			{Name: "apiserver_flowcontrol_request_concurrency_limit", Type: "gauge", Labels: []string{"priority_level"}, Scheme: ByPriorityLevel, Until: r136, Stability: "ALPHA", Fallback: true, Source: "v0.30.14 pkg/util/flowcontrol/metrics/metrics.go:238 (deprecated 1.30.0)"},
		},
	},
	{
		ID:  ExecutingRequests,
		Use: "APF executing requests (a WATCH counts only in its initial phase)",
		Variants: []Variant{{
			Name: "apiserver_flowcontrol_current_executing_requests", Type: "gauge", Labels: []string{"priority_level", "flow_schema"}, Scheme: ByPriorityLevel, Stability: "BETA",
			Source: "v0.30.14 pkg/util/flowcontrol/metrics/metrics.go:250",
		}},
	},
	{
		ID:  Goroutines,
		Use: "goroutines in the API server process",
		Variants: []Variant{{
			Name: "go_goroutines", Type: "gauge", Scheme: ByNothing,
			Source: "client_golang Go collector, registered by k8s.io/component-base metrics/legacyregistry/registry.go:55 (v0.30.14 to v0.37.2)",
		}},
	},
	{
		ID:  ResidentMemory,
		Use: "resident memory of the API server process",
		Variants: []Variant{{
			Name: "process_resident_memory_bytes", Type: "gauge", Scheme: ByNothing,
			Source: "client_golang process collector, registered by k8s.io/component-base metrics/legacyregistry/registry.go:54 (v0.30.14 to v0.37.2)",
		}},
	},
	{
		ID:  ProcessStartTime,
		Use: "process start time: a change between two samples means a restart",
		Variants: []Variant{{
			Name: "process_start_time_seconds", Type: "gauge", Scheme: ByNothing,
			Source: "client_golang process collector, registered by k8s.io/component-base metrics/legacyregistry/registry.go:54 (v0.30.14 to v0.37.2)",
		}},
	},
}

// Catalog returns the watch metrics and their spellings across releases.
func Catalog() []Metric {
	out := make([]Metric, len(catalog))
	copy(out, catalog)
	return out
}

// CatalogMetric returns the catalog entry for id.
func CatalogMetric(id MetricID) (Metric, bool) {
	for _, m := range catalog {
		if m.ID == id {
			return m, true
		}
	}
	return Metric{}, false
}

// ignored are watch-related families that the catalog releases define but
// watch-doctor does not read, with the first release that defines each (zero:
// all of 1.30 to 1.37), as listed in testdata/upstream/*.txt. A family in the
// watch namespace that is neither in the catalog nor here is reported as
// unknown: a newer release or a patched server. Their presence also narrows
// the version detection.
var ignored = map[string]Release{
	"apiserver_cache_list_fetched_objects_total":            {},
	"apiserver_cache_list_returned_objects_total":           {},
	"apiserver_cache_list_total":                            {},
	"apiserver_watch_cache_consistent_read_total":           r131,
	"apiserver_watch_cache_initialization_duration_seconds": r137,
	"apiserver_watch_cache_initialization_errors_total":     r137,
	"apiserver_watch_cache_read_wait_seconds":               {},
	"apiserver_watch_events_dispatch_duration_seconds":      r137,
	"apiserver_watch_filtered_events_total":                 r136, // feature-gated
	"apiserver_watch_shards_total":                          r136, // feature-gated
	"watch_cache_capacity_decrease_total":                   {},
	"watch_cache_capacity_increase_total":                   {},
}

// watchNamespace reports whether a family name belongs to the watch
// machinery, so an unknown one is worth listing.
func watchNamespace(name string) bool {
	for _, p := range []string{"apiserver_watch_", "watch_cache_", "apiserver_init_events", "apiserver_terminated_watchers", "apiserver_registered_watchers", "apiserver_cache_list"} {
		if len(name) >= len(p) && name[:len(p)] == p {
			return true
		}
	}
	return false
}

// knownNames returns every family name the catalog reads, sorted.
func knownNames() []string {
	seen := map[string]bool{}
	for _, m := range catalog {
		for _, n := range m.Names() {
			seen[n] = true
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
