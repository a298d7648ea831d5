package metrics

import (
	"fmt"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

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
		if why := val.unusable(); why != "" {
			// Checked before use: a hostile or broken server's NaN,
			// infinity or negative count is not measured, said (with
			// the first such value) once per family.
			if !reported["\x00unusable"] {
				reported["\x00unusable"] = true
				e.unknown(fam.GetName(), names, why)
			}
			continue
		}
		e.add(m.ID, v.Scheme, series, val)
	}
}

// add accumulates one series value into the row or level it names, at
// the place fields maps the metric to.
func (e *extractor) add(id MetricID, sch Scheme, series *dto.Metric, val seriesVal) {
	lv := func(n string) string { return labelValue(series, n) }
	f := fields[id]
	switch sch {
	case ByNothing:
		e.seen[id] = true
		if f.process != nil {
			p := f.process(e.snap)
			*p = addNaN(*p, val.v)
		}
		return
	case ByPriorityLevel:
		e.seen[id] = true
		name := lv("priority_level")
		if f.level != nil {
			p := f.level(e.level(name))
			*p = addNaN(*p, val.v)
		}
		if f.flowSchema != nil {
			p := f.flowSchema(e.flowSchema(name, lv("flow_schema")))
			*p = addNaN(*p, val.v)
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
	if f.value != nil {
		v := val.v
		if f.valueIsSum {
			v = val.sum
		}
		p := f.value(r)
		*p = addNaN(*p, v)
	}
	if f.sum != nil {
		p := f.sum(r)
		*p = addNaN(*p, val.sum)
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

// fill sets 0 where a metric covers a row but has no series for it, and
// records Missing metrics.
func (e *extractor) fill() {
	for _, m := range catalog {
		defined := len(m.VariantsIn(e.rel)) > 0
		present := e.seen[m.ID]
		if !present {
			e.snap.Missing = append(e.snap.Missing, e.missing(m, defined))
		}
		f := fields[m.ID]
		if f.keepAbsent || (!present && !(defined && counterLike(m, e.rel))) {
			continue
		}
		for _, r := range e.rows {
			if f.cacheOnly && !r.Cached() {
				continue
			}
			if r.Resource == "" && m.ID == Watchers {
				continue
			}
			for _, p := range f.resourceValues(r) {
				if Absent(*p) {
					*p = 0
				}
			}
		}
		if f.level != nil {
			for _, pl := range e.pls {
				if p := f.level(pl); Absent(*p) {
					*p = 0
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
