package metrics

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// Absent reports whether a value of the watch model is absent: the model
// stores absent values as NaN (never as 0), so a metric the server did not
// expose cannot pass for a zero. Renderers print NaN as "-" (table) or null
// (JSON, YAML).
func Absent(v float64) bool { return math.IsNaN(v) }

var nan = math.NaN()

// Snapshot is the watch model of one sample of one API server. It is a
// plain value: Extract builds it and nothing changes it afterwards, so it
// may be read from several goroutines.
//
// Every float64 in it is NaN when the metric is absent or does not apply
// (see Absent). A counter that the release defines but that has no series
// yet (a counter vector shows nothing until first incremented) is read as 0
// for the resources it covers, and listed in Missing with that reason.
type Snapshot struct {
	Source     string
	CapturedAt time.Time
	Version    VersionInfo

	Goroutines          float64
	ResidentMemoryBytes float64
	// ProcessStartTime is in seconds since the Unix epoch.
	ProcessStartTime float64

	// Resources are sorted by group, then resource; rows known only by a
	// kind (before 1.34, see Resource.Kind) come last.
	Resources []Resource
	// PriorityLevels are sorted by name.
	PriorityLevels []PriorityLevel

	// Missing lists catalog metrics without any series, and why.
	Missing []Missing
	// Unknown lists watch families or label sets the catalog does not know.
	Unknown []Unknown
	// BlindSpots say what the columns cannot show, with the upstream source.
	BlindSpots []BlindSpot
	// Notes carry everything else worth saying: skipped input, version
	// detection, kinds that could not be matched to a resource.
	Notes []string
}

// Resource is the watch state of one API resource.
type Resource struct {
	Group    string
	Resource string
	// Kind is set only on rows built from a kind-labelled metric (releases
	// before 1.34) that could not be matched to a resource.
	Kind string

	// Watchers is the number of WATCH requests being served
	// (apiserver_longrunning_requests{verb="WATCH"}, summed over version,
	// scope, subresource and component).
	Watchers float64
	// RegisteredWatchers is apiserver_registered_watchers (1.24 and older).
	RegisteredWatchers float64
	// InitEvents, TerminatedWatchers, EventsReceived, EventsDispatched and
	// CacheInitializations are watch cache counters (NaN for resources not
	// served from the watch cache).
	InitEvents           float64
	TerminatedWatchers   float64
	EventsReceived       float64
	EventsDispatched     float64
	CacheInitializations float64
	// CacheCapacity and CacheResourceVersion are watch cache gauges.
	CacheCapacity        float64
	CacheResourceVersion float64
	// WatchEvents and WatchEventBytes count what watch handlers wrote to
	// clients (summed over API versions).
	WatchEvents     float64
	WatchEventBytes float64
	// WatchLists and WatchListSeconds are the count and total duration of
	// completed watch-list requests.
	WatchLists       float64
	WatchListSeconds float64
}

// Key identifies the row: group/resource, or group/Kind=kind.
func (r Resource) Key() string {
	if r.Resource == "" && r.Kind != "" {
		return r.Group + "/Kind=" + r.Kind
	}
	return r.Group + "/" + r.Resource
}

// Name formats the row as kubectl does: "pods", "deployments.apps", or
// "Kind=Deployment.apps" for a kind-only row.
func (r Resource) Name() string {
	n := r.Resource
	if n == "" {
		n = "Kind=" + r.Kind
	}
	if r.Group != "" {
		n += "." + r.Group
	}
	return n
}

// Cached reports whether any watch cache metric has a series for the row.
func (r Resource) Cached() bool {
	for _, v := range []float64{r.InitEvents, r.TerminatedWatchers, r.EventsReceived, r.EventsDispatched, r.CacheInitializations, r.CacheCapacity, r.CacheResourceVersion} {
		if !Absent(v) {
			return true
		}
	}
	return false
}

// PriorityLevel is the APF state of one priority level.
type PriorityLevel struct {
	Name string
	// ExecutingSeats and ExecutingRequests are summed over flow schemas.
	// A WATCH counts only while in its initial phase, which is where a stuck
	// watch stays.
	ExecutingSeats    float64
	LimitSeats        float64
	ExecutingRequests float64
	// FlowSchemas break the executing figures down, sorted by name.
	FlowSchemas []FlowSchemaLoad
}

// FlowSchemaLoad is the executing load of one flow schema in a priority level.
type FlowSchemaLoad struct {
	Name              string
	ExecutingSeats    float64
	ExecutingRequests float64
}

// Missing is a catalog metric with no series in the sample.
type Missing struct {
	Metric MetricID
	// Names are the family names looked for.
	Names  []string
	Reason string
	// ReadAsZero is true when the values were taken as 0 (a defined counter
	// with no series yet).
	ReadAsZero bool
}

// Unknown is a family, or a label set of a known family, that the catalog
// does not describe. Its values were not used unless Reason says otherwise.
type Unknown struct {
	Name   string
	Labels []string
	Reason string
}

// BlindSpot says what a column cannot show.
type BlindSpot struct {
	Metric MetricID
	Text   string
	// Source is the upstream file:line the statement rests on.
	Source string
}

// VersionInfo says which release's mapping was used and why.
type VersionInfo struct {
	// Release is the release whose names and labels were expected.
	Release Release
	// GitVersion is kubernetes_build_info's git_version, when exposed.
	GitVersion string
	// From is how Release was found: "given", "kubernetes_build_info",
	// "metric names and labels" or "assumed".
	From string
	// Min and Max bound the releases consistent with the metric names and
	// labels (zero: unbounded).
	Min, Max Release
	// Evidence lists what narrowed Min and Max.
	Evidence []string
}

func (v VersionInfo) String() string {
	switch v.From {
	case "kubernetes_build_info":
		return fmt.Sprintf("%s (kubernetes_build_info %s)", v.Release, v.GitVersion)
	case "given":
		return fmt.Sprintf("%s (given)", v.Release)
	case "assumed":
		return fmt.Sprintf("%s (assumed: no version evidence)", v.Release)
	}
	var span string
	switch {
	case v.Min == v.Max:
		span = v.Min.String()
	case v.Max.IsZero():
		span = v.Min.String() + " or newer"
	case v.Min.IsZero():
		span = v.Max.String() + " or older"
	default:
		span = v.Min.String() + " to " + v.Max.String()
	}
	if v.Min == v.Max {
		return fmt.Sprintf("%s (%s)", span, v.From)
	}
	return fmt.Sprintf("%s (%s; %s names expected)", span, v.From, v.Release)
}

// Extract maps a sample to the watch model, detecting the release from
// kubernetes_build_info or, failing that, from the metric names and labels.
func Extract(s *Sample) *Snapshot {
	return extract(s, detectVersion(s))
}

// ExtractRelease is Extract with the release given (for example from
// /version), which decides what counts as missing.
func ExtractRelease(s *Sample, r Release) *Snapshot {
	v := detectVersion(s)
	v.Release, v.From = r, "given"
	return extract(s, v)
}

// rowKey identifies a resource row during accumulation.
type rowKey struct{ group, resource, kind string }

type extractor struct {
	s    *Sample
	snap *Snapshot
	rel  Release // the mapping release
	rows map[rowKey]*Resource
	pls  map[string]*PriorityLevel
	fss  map[[2]string]*FlowSchemaLoad
	// seen records which metrics had at least one usable series.
	seen map[MetricID]bool
}

func extract(s *Sample, v VersionInfo) *Snapshot {
	snap := &Snapshot{
		Source:              s.Source,
		CapturedAt:          s.CapturedAt,
		Version:             v,
		Goroutines:          nan,
		ResidentMemoryBytes: nan,
		ProcessStartTime:    nan,
	}
	for _, sk := range s.Skipped {
		snap.Notes = append(snap.Notes, "input skipped: "+sk.String())
	}
	rel := v.Release
	switch {
	case rel.Compare(OldestRelease()) < 0:
		snap.Notes = append(snap.Notes, fmt.Sprintf("release %s is older than the mapping (%s to %s): names and labels of %s expected", rel, OldestRelease(), NewestRelease(), OldestRelease()))
		rel = OldestRelease()
	case rel.Compare(NewestRelease()) > 0:
		snap.Notes = append(snap.Notes, fmt.Sprintf("release %s is newer than the mapping (%s to %s): names and labels of %s expected", rel, OldestRelease(), NewestRelease(), NewestRelease()))
		rel = NewestRelease()
	}
	if v.From != "kubernetes_build_info" && v.From != "given" {
		snap.Notes = append(snap.Notes, fmt.Sprintf("no kubernetes_build_info: release %s, from %d clues (see version evidence)", v, len(v.Evidence)))
	}
	e := &extractor{
		s: s, snap: snap, rel: rel,
		rows: map[rowKey]*Resource{},
		pls:  map[string]*PriorityLevel{},
		fss:  map[[2]string]*FlowSchemaLoad{},
		seen: map[MetricID]bool{},
	}
	for _, m := range catalog {
		e.read(m)
	}
	e.resolveKinds()
	e.fill()
	e.unknownFamilies()
	e.finish()
	return snap
}

// read takes the series of every family the metric has had, primary
// variants first; fallbacks only when no primary family has series.
func (e *extractor) read(m Metric) {
	for _, fallback := range []bool{false, true} {
		for _, name := range m.Names() {
			fam := e.s.Family(name)
			if fam == nil {
				continue
			}
			var vs []Variant
			for _, v := range m.Variants {
				if v.Name == name && v.Fallback == fallback {
					vs = append(vs, v)
				}
			}
			if len(vs) == 0 {
				continue
			}
			e.readFamily(m, fam, vs)
		}
		if e.seen[m.ID] {
			return
		}
	}
}

func (e *extractor) readFamily(m Metric, fam *dto.MetricFamily, vs []Variant) {
	want := vs[0].Type
	if !typeFits(fam.GetType(), want) {
		e.unknown(fam.GetName(), nil, fmt.Sprintf("type %s, the mapping says %s: not used", strings.ToLower(fam.GetType().String()), want))
		return
	}
	reported := map[string]bool{}
	for _, series := range fam.GetMetric() {
		names := labelNames(series)
		v, ok := matchVariant(vs, names)
		if !ok {
			sch, sniffed := sniffScheme(vs[0].Scheme, names)
			key := strings.Join(names, ",")
			if !reported[key] {
				reported[key] = true
				reason := "label set not in the mapping: not used"
				if sniffed {
					reason = fmt.Sprintf("label set not in the mapping: read as %s", sch)
				}
				e.unknown(fam.GetName(), names, reason)
			}
			if !sniffed {
				continue
			}
			v = Variant{Name: fam.GetName(), Type: want, Scheme: sch}
		}
		val, ok := seriesValue(series, want)
		if !ok {
			continue
		}
		e.add(m.ID, v.Scheme, series, val)
	}
}

// add accumulates one series value into the row or level it names.
func (e *extractor) add(id MetricID, sch Scheme, series *dto.Metric, val seriesVal) {
	lv := func(n string) string { return labelValue(series, n) }
	switch sch {
	case ByNothing:
		e.seen[id] = true
		switch id {
		case Goroutines:
			e.snap.Goroutines = addNaN(e.snap.Goroutines, val.v)
		case ResidentMemory:
			e.snap.ResidentMemoryBytes = addNaN(e.snap.ResidentMemoryBytes, val.v)
		case ProcessStartTime:
			e.snap.ProcessStartTime = addNaN(e.snap.ProcessStartTime, val.v)
		}
		return
	case ByPriorityLevel:
		e.seen[id] = true
		name := lv("priority_level")
		pl := e.level(name)
		switch id {
		case LimitSeats:
			pl.LimitSeats = addNaN(pl.LimitSeats, val.v)
		case ExecutingSeats, ExecutingRequests:
			fs := e.flowSchema(name, lv("flow_schema"))
			if id == ExecutingSeats {
				pl.ExecutingSeats = addNaN(pl.ExecutingSeats, val.v)
				fs.ExecutingSeats = addNaN(fs.ExecutingSeats, val.v)
			} else {
				pl.ExecutingRequests = addNaN(pl.ExecutingRequests, val.v)
				fs.ExecutingRequests = addNaN(fs.ExecutingRequests, val.v)
			}
		}
		return
	case ByRequest:
		if lv("verb") != "WATCH" {
			e.seen[id] = true // the family is there, just not for watches
			return
		}
	}
	var k rowKey
	switch sch {
	case ByGroupResource, ByGroupVersionResource, ByRequest:
		k = rowKey{group: lv("group"), resource: lv("resource")}
	case ByResourceString:
		res, group, _ := strings.Cut(lv("resource"), ".")
		k = rowKey{group: group, resource: res}
	case ByGroupVersionKind:
		k = rowKey{group: lv("group"), kind: lv("kind")}
	}
	if k.resource == "" && k.kind == "" {
		return
	}
	e.seen[id] = true
	r := e.row(k)
	switch id {
	case Watchers:
		r.Watchers = addNaN(r.Watchers, val.v)
	case RegisteredWatchers:
		r.RegisteredWatchers = addNaN(r.RegisteredWatchers, val.v)
	case InitEvents:
		r.InitEvents = addNaN(r.InitEvents, val.v)
	case TerminatedWatchers:
		r.TerminatedWatchers = addNaN(r.TerminatedWatchers, val.v)
	case WatchEvents:
		r.WatchEvents = addNaN(r.WatchEvents, val.v)
	case WatchEventSizes:
		r.WatchEventBytes = addNaN(r.WatchEventBytes, val.sum)
	case CacheEventsReceived:
		r.EventsReceived = addNaN(r.EventsReceived, val.v)
	case CacheEventsDispatched:
		r.EventsDispatched = addNaN(r.EventsDispatched, val.v)
	case CacheResourceVersion:
		r.CacheResourceVersion = addNaN(r.CacheResourceVersion, val.v)
	case CacheInitializations:
		r.CacheInitializations = addNaN(r.CacheInitializations, val.v)
	case CacheCapacity:
		r.CacheCapacity = addNaN(r.CacheCapacity, val.v)
	case WatchListDuration:
		r.WatchLists = addNaN(r.WatchLists, val.count)
		r.WatchListSeconds = addNaN(r.WatchListSeconds, val.sum)
	}
}

func (e *extractor) row(k rowKey) *Resource {
	r, ok := e.rows[k]
	if !ok {
		r = &Resource{Group: k.group, Resource: k.resource, Kind: k.kind}
		setNaN(r)
		e.rows[k] = r
	}
	return r
}

func setNaN(r *Resource) {
	for _, p := range resourceValues(r) {
		*p = nan
	}
}

// resourceValues lists pointers to every value of r, for bulk updates.
func resourceValues(r *Resource) []*float64 {
	return []*float64{&r.Watchers, &r.RegisteredWatchers, &r.InitEvents, &r.TerminatedWatchers,
		&r.EventsReceived, &r.EventsDispatched, &r.CacheInitializations, &r.CacheCapacity,
		&r.CacheResourceVersion, &r.WatchEvents, &r.WatchEventBytes, &r.WatchLists, &r.WatchListSeconds}
}

func (e *extractor) level(name string) *PriorityLevel {
	pl, ok := e.pls[name]
	if !ok {
		pl = &PriorityLevel{Name: name, ExecutingSeats: nan, LimitSeats: nan, ExecutingRequests: nan}
		e.pls[name] = pl
	}
	return pl
}

func (e *extractor) flowSchema(pl, fs string) *FlowSchemaLoad {
	k := [2]string{pl, fs}
	f, ok := e.fss[k]
	if !ok {
		f = &FlowSchemaLoad{Name: fs, ExecutingSeats: nan, ExecutingRequests: nan}
		e.fss[k] = f
	}
	return f
}

func (e *extractor) unknown(name string, labels []string, reason string) {
	e.snap.Unknown = append(e.snap.Unknown, Unknown{Name: name, Labels: labels, Reason: reason})
}

// resolveKinds merges rows known only by kind (apiserver_watch_events_* before
// 1.34) into the row of the one resource in the same group whose name is a
// plural of the kind; rows that match none or several stay kind rows.
func (e *extractor) resolveKinds() {
	byGroup := map[string]map[string]bool{}
	for k := range e.rows {
		if k.resource != "" {
			if byGroup[k.group] == nil {
				byGroup[k.group] = map[string]bool{}
			}
			byGroup[k.group][k.resource] = true
		}
	}
	var unmatched []string
	for _, k := range sortedKeys(e.rows) {
		if k.kind == "" {
			continue
		}
		var hits []string
		for _, c := range pluralCandidates(k.kind) {
			if byGroup[k.group][c] {
				hits = append(hits, c)
			}
		}
		if len(hits) != 1 {
			unmatched = append(unmatched, (&Resource{Group: k.group, Kind: k.kind}).Name())
			continue
		}
		from := e.rows[k]
		to := e.rows[rowKey{group: k.group, resource: hits[0]}]
		src, dst := resourceValues(from), resourceValues(to)
		for i := range src {
			if !Absent(*src[i]) {
				*dst[i] = addNaN(*dst[i], *src[i])
			}
		}
		delete(e.rows, k)
	}
	if len(unmatched) > 0 {
		e.snap.Notes = append(e.snap.Notes, fmt.Sprintf("watch events labelled by kind (before 1.34) with no resource of that name in the sample, kept as kind rows: %s", strings.Join(unmatched, ", ")))
	}
}

// pluralCandidates lists resource names a kind may have: lower-case plural
// forms, and the kind itself (Endpoints -> endpoints).
func pluralCandidates(kind string) []string {
	k := strings.ToLower(kind)
	out := []string{k + "s", k}
	switch {
	case strings.HasSuffix(k, "s"), strings.HasSuffix(k, "x"), strings.HasSuffix(k, "z"), strings.HasSuffix(k, "ch"), strings.HasSuffix(k, "sh"):
		out = append(out, k+"es")
	case strings.HasSuffix(k, "y") && len(k) > 1 && !strings.ContainsRune("aeiou", rune(k[len(k)-2])):
		out = append(out, k[:len(k)-1]+"ies")
	}
	return out
}

// cacheMetric reports whether a metric covers only the resources served
// from the watch cache (the others cover every resource).
func cacheMetric(id MetricID) bool {
	switch id {
	case InitEvents, TerminatedWatchers, CacheEventsReceived, CacheEventsDispatched, CacheResourceVersion, CacheInitializations, CacheCapacity:
		return true
	}
	return false
}

// zeroable metrics read as 0 where they have no series but cover the row:
// counters, and gauges whose children are created on first use.
func zeroable(id MetricID) bool {
	switch id {
	case CacheCapacity, CacheResourceVersion, RegisteredWatchers, LimitSeats:
		return false
	}
	return true
}

// fill sets 0 where a metric covers a row but has no series for it, and
// records Missing metrics.
func (e *extractor) fill() {
	for _, m := range catalog {
		defined := len(m.VariantsIn(e.rel)) > 0
		present := e.seen[m.ID]
		if !present {
			e.snap.Missing = append(e.snap.Missing, e.missing(m, defined))
		}
		if !zeroable(m.ID) || (!present && !(defined && counterLike(m, e.rel))) {
			continue
		}
		for _, r := range e.rows {
			if cacheMetric(m.ID) && !r.Cached() {
				continue
			}
			if r.Resource == "" && m.ID == Watchers {
				continue
			}
			p := fieldOf(r, m.ID)
			for _, f := range p {
				if Absent(*f) {
					*f = 0
				}
			}
		}
		if m.ID == ExecutingSeats || m.ID == ExecutingRequests {
			for _, pl := range e.pls {
				if m.ID == ExecutingSeats && Absent(pl.ExecutingSeats) {
					pl.ExecutingSeats = 0
				}
				if m.ID == ExecutingRequests && Absent(pl.ExecutingRequests) {
					pl.ExecutingRequests = 0
				}
			}
		}
	}
}

// counterLike reports whether the metric is a counter (or histogram) vector
// in release r: such a vector exposes no family until first incremented, so
// its absence means 0.
func counterLike(m Metric, r Release) bool {
	for _, v := range m.VariantsIn(r) {
		if v.Type == "counter" || v.Type == "histogram" {
			return true
		}
	}
	return false
}

func fieldOf(r *Resource, id MetricID) []*float64 {
	switch id {
	case Watchers:
		return []*float64{&r.Watchers}
	case InitEvents:
		return []*float64{&r.InitEvents}
	case TerminatedWatchers:
		return []*float64{&r.TerminatedWatchers}
	case WatchEvents:
		return []*float64{&r.WatchEvents}
	case WatchEventSizes:
		return []*float64{&r.WatchEventBytes}
	case CacheEventsReceived:
		return []*float64{&r.EventsReceived}
	case CacheEventsDispatched:
		return []*float64{&r.EventsDispatched}
	case CacheInitializations:
		return []*float64{&r.CacheInitializations}
	case WatchListDuration:
		return []*float64{&r.WatchLists, &r.WatchListSeconds}
	}
	return nil
}

func (e *extractor) missing(m Metric, defined bool) Missing {
	out := Missing{Metric: m.ID, Names: m.Names()}
	switch {
	case !defined && m.Absent != "":
		out.Reason = m.Absent
	case !defined:
		var since Release
		for _, v := range m.Variants {
			if !v.Fallback && !v.Since.IsZero() && (since.IsZero() || v.Since.Compare(since) < 0) {
				since = v.Since
			}
		}
		out.Reason = fmt.Sprintf("not defined in %s (since %s)", e.rel, since)
	case counterLike(m, e.rel):
		out.Reason = fmt.Sprintf("no series: kube-apiserver %s defines it, but a counter or histogram vector exposes nothing until first observed; read as 0", e.rel)
		out.ReadAsZero = true
	default:
		out.Reason = fmt.Sprintf("not found, though kube-apiserver %s exposes it (not a kube-apiserver, or the metric is filtered out)", e.rel)
	}
	return out
}

// unknownFamilies lists watch-namespace families the catalog does not know.
func (e *extractor) unknownFamilies() {
	known := map[string]bool{}
	for _, n := range knownNames() {
		known[n] = true
	}
	for _, name := range e.s.FamilyNames() {
		if known[name] || !watchNamespace(name) {
			continue
		}
		if _, ok := ignored[name]; ok {
			continue
		}
		var labels []string
		if ms := e.s.Family(name).GetMetric(); len(ms) > 0 {
			labels = labelNames(ms[0])
		}
		e.unknown(name, labels, fmt.Sprintf("not defined by kube-apiserver %s to %s: not used", OldestRelease(), NewestRelease()))
	}
}

func (e *extractor) finish() {
	for _, k := range sortedKeys(e.rows) {
		e.snap.Resources = append(e.snap.Resources, *e.rows[k])
	}
	names := make([]string, 0, len(e.pls))
	for n := range e.pls {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		pl := e.pls[n]
		for k, fs := range e.fss {
			if k[0] == n {
				pl.FlowSchemas = append(pl.FlowSchemas, *fs)
			}
		}
		sort.Slice(pl.FlowSchemas, func(i, j int) bool { return pl.FlowSchemas[i].Name < pl.FlowSchemas[j].Name })
		e.snap.PriorityLevels = append(e.snap.PriorityLevels, *pl)
	}
	sort.Slice(e.snap.Unknown, func(i, j int) bool {
		a, b := e.snap.Unknown[i], e.snap.Unknown[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return strings.Join(a.Labels, ",") < strings.Join(b.Labels, ",")
	})
	e.snap.BlindSpots = blindSpots(e.snap)
}

// sortedKeys orders rows by group, resource; kind rows last.
func sortedKeys(rows map[rowKey]*Resource) []rowKey {
	keys := make([]rowKey, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if (a.kind == "") != (b.kind == "") {
			return a.kind == ""
		}
		if a.group != b.group {
			return a.group < b.group
		}
		if a.resource != b.resource {
			return a.resource < b.resource
		}
		return a.kind < b.kind
	})
	return keys
}

// seriesVal is the value of one series: v for counters and gauges, sum and
// count for histograms.
type seriesVal struct{ v, sum, count float64 }

func typeFits(got dto.MetricType, want string) bool {
	switch want {
	case "counter":
		return got == dto.MetricType_COUNTER || got == dto.MetricType_UNTYPED
	case "gauge":
		return got == dto.MetricType_GAUGE || got == dto.MetricType_UNTYPED
	case "histogram":
		return got == dto.MetricType_HISTOGRAM || got == dto.MetricType_GAUGE_HISTOGRAM
	}
	return false
}

func seriesValue(m *dto.Metric, want string) (seriesVal, bool) {
	switch {
	case m.GetCounter() != nil:
		return seriesVal{v: m.GetCounter().GetValue()}, true
	case m.GetGauge() != nil:
		return seriesVal{v: m.GetGauge().GetValue()}, true
	case m.GetUntyped() != nil:
		return seriesVal{v: m.GetUntyped().GetValue()}, true
	case m.GetHistogram() != nil:
		h := m.GetHistogram()
		count := float64(h.GetSampleCount())
		if h.SampleCountFloat != nil {
			count = h.GetSampleCountFloat()
		}
		return seriesVal{v: count, sum: h.GetSampleSum(), count: count}, true
	}
	return seriesVal{}, false
}

// labelNames returns the series' label names, sorted, without the
// histogram/summary bucket labels.
func labelNames(m *dto.Metric) []string {
	out := make([]string, 0, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		if n := l.GetName(); n != "le" && n != "quantile" {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func matchVariant(vs []Variant, names []string) (Variant, bool) {
	for _, v := range vs {
		if sameSet(v.Labels, names) {
			return v, true
		}
	}
	return Variant{}, false
}

func sameSet(a, sortedB []string) bool {
	if len(a) != len(sortedB) {
		return false
	}
	s := append([]string(nil), a...)
	sort.Strings(s)
	for i := range s {
		if s[i] != sortedB[i] {
			return false
		}
	}
	return true
}

// sniffScheme reads an unexpected label set as best it can: extra labels
// are tolerated when the ones the scheme needs are there.
func sniffScheme(want Scheme, names []string) (Scheme, bool) {
	has := map[string]bool{}
	for _, n := range names {
		has[n] = true
	}
	switch want {
	case ByNothing:
		return ByNothing, len(names) == 0
	case ByPriorityLevel:
		return ByPriorityLevel, has["priority_level"]
	case ByRequest:
		return ByRequest, has["verb"] && has["resource"]
	}
	switch {
	case has["group"] && has["resource"]:
		return ByGroupResource, true
	case has["resource"] && !has["group"]:
		return ByResourceString, true
	case has["kind"]:
		return ByGroupVersionKind, true
	}
	return want, false
}

// addNaN adds b to a, where an absent (NaN) a counts as 0.
func addNaN(a, b float64) float64 {
	if Absent(a) {
		return b
	}
	return a + b
}
