package metrics

import (
	"fmt"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// detectVersion finds the release of the server that produced s:
// kubernetes_build_info's git_version when exposed; otherwise the range of
// catalog releases consistent with the names, labels and stability levels
// present.
func detectVersion(s *Sample) VersionInfo {
	if v, ok := buildInfoVersion(s); ok {
		return v
	}
	v := VersionInfo{From: "metric names and labels"}
	for _, m := range catalog {
		for _, name := range m.Names() {
			if f := s.Family(name); f != nil {
				v.variantEvidence(m, name, f)
			}
		}
	}
	v.presenceEvidence(s)
	v.chooseRelease()
	return v
}

// buildInfoVersion is the release kubernetes_build_info's git_version
// names, if one of its series names one.
func buildInfoVersion(s *Sample) (VersionInfo, bool) {
	f := s.Family("kubernetes_build_info")
	if f == nil {
		return VersionInfo{}, false
	}
	for _, m := range f.GetMetric() {
		gv := labelValue(m, "git_version")
		if r, err := ParseRelease(gv); err == nil {
			return VersionInfo{GitVersion: gv, Release: r, From: "kubernetes_build_info", Min: r, Max: r}, true
		}
	}
	return VersionInfo{}, false
}

// atLeast raises the lower bound to r, noting why.
func (v *VersionInfo) atLeast(r Release, why string) {
	if v.Min.IsZero() || r.Compare(v.Min) > 0 {
		v.Min = r
	}
	v.Evidence = append(v.Evidence, fmt.Sprintf("%s (%s or newer)", why, r))
}

// atMost lowers the upper bound to r, noting why.
func (v *VersionInfo) atMost(r Release, why string) {
	if v.Max.IsZero() || r.Compare(v.Max) < 0 {
		v.Max = r
	}
	v.Evidence = append(v.Evidence, fmt.Sprintf("%s (%s or older)", why, r))
}

// variantEvidence bounds the release by the variants of catalog metric m
// whose label sets family f (named name) shows, and by the stability level
// its help text gives.
func (v *VersionInfo) variantEvidence(m Metric, name string, f *dto.MetricFamily) {
	// Which variants' label sets occur?
	matched := map[int]bool{}
	for _, series := range f.GetMetric() {
		names := labelNames(series)
		for i, vr := range m.Variants {
			if vr.Name == name && sameSet(vr.Labels, names) {
				matched[i] = true
			}
		}
	}
	level := helpStability(f.GetHelp())
	for i, vr := range m.Variants {
		if !matched[i] {
			continue
		}
		// Only a label set that one range of releases has is evidence.
		if !vr.Since.IsZero() && distinctLabels(m, i) {
			v.atLeast(vr.Since, fmt.Sprintf("%s has labels %s", name, strings.Join(vr.Labels, ",")))
		}
		if !vr.Until.IsZero() && distinctLabels(m, i) {
			v.atMost(vr.Until, fmt.Sprintf("%s has labels %s", name, strings.Join(vr.Labels, ",")))
		}
		if level == "" || len(vr.StabilityChanges) == 0 {
			continue
		}
		lo, hi, ok := stabilityRange(vr, level)
		if !ok {
			continue
		}
		if lo.Compare(OldestRelease()) > 0 && (vr.Since.IsZero() || lo.Compare(vr.Since) > 0) {
			v.atLeast(lo, fmt.Sprintf("%s is %s", name, level))
		}
		if !hi.IsZero() && (vr.Until.IsZero() || hi.Compare(vr.Until) < 0) {
			v.atMost(hi, fmt.Sprintf("%s is %s", name, level))
		}
	}
}

// presenceEvidence bounds the release by families only newer releases
// define, and by the watch cache gauges of 1.30.
func (v *VersionInfo) presenceEvidence(s *Sample) {
	names := make([]string, 0, len(ignored))
	for name := range ignored {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if since := ignored[name]; !since.IsZero() && s.Family(name) != nil {
			v.atLeast(since, name+" is present")
		}
	}
	// apiserver_watch_cache_resource_version is set for every cached
	// resource since 1.31; other watch cache gauges without it mean 1.30.
	if s.Family("watch_cache_capacity") != nil && s.Family("apiserver_watch_cache_resource_version") == nil {
		v.atMost(Release{1, 30}, "watch_cache_capacity without apiserver_watch_cache_resource_version")
	}
}

// chooseRelease picks the release within the bounds: the newest one
// allowed, the lower bound when the evidence conflicts, the newest
// catalog release when there is none.
func (v *VersionInfo) chooseRelease() {
	switch {
	case v.Min.IsZero() && v.Max.IsZero():
		v.Release, v.From = NewestRelease(), "assumed"
		v.Evidence = append(v.Evidence, "no version evidence: assuming "+NewestRelease().String())
	case !v.Min.IsZero() && !v.Max.IsZero() && v.Min.Compare(v.Max) > 0:
		v.Evidence = append(v.Evidence, fmt.Sprintf("conflicting evidence (%s or newer, yet %s or older): using %s", v.Min, v.Max, v.Min))
		v.Release = v.Min
	case !v.Max.IsZero():
		v.Release = v.Max
	default:
		v.Release = NewestRelease()
		if v.Min.Compare(v.Release) > 0 {
			v.Release = v.Min
		}
	}
}

// distinctLabels reports whether variant i's label set is unique among the
// metric's variants of the same name (so seeing it pins the release range).
func distinctLabels(m Metric, i int) bool {
	for j, o := range m.Variants {
		if j != i && o.Name == m.Variants[i].Name && sameSet(o.Labels, sortedCopy(m.Variants[i].Labels)) {
			return false
		}
	}
	return true
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// stabilityRange returns the releases (within the variant's span) in which
// the variant has the given stability level.
func stabilityRange(v Variant, level string) (lo, hi Release, ok bool) {
	for _, ri := range releases {
		r := ri.Release
		if !v.In(r) || v.StabilityIn(r) != level {
			continue
		}
		if !ok {
			lo, ok = r, true
		}
		hi = r
	}
	if ok && hi == NewestRelease() {
		hi = Release{} // may stay so after the catalog
	}
	return lo, hi, ok
}

// helpStability reads the "[BETA] " prefix component-base puts on HELP.
func helpStability(help string) string {
	if !strings.HasPrefix(help, "[") {
		return ""
	}
	end := strings.IndexByte(help, ']')
	if end < 0 {
		return ""
	}
	switch l := help[1:end]; l {
	case "ALPHA", "BETA", "STABLE", "INTERNAL":
		return l
	}
	return ""
}

// exposedPrefixes are the name prefixes of families kube-apiserver and the
// Go and process collectors it registers expose (component-base/metrics,
// prometheus/client_golang's go and process collectors).
var exposedPrefixes = []string{
	"apiserver_", "etcd_", "go_", "process_", "kubernetes_", "rest_client_",
	"workqueue_", "watch_cache_", "aggregator_", "authentication_",
	"authorization_", "field_validation_", "registered_metrics_", "storage_",
}

// IsKnownName reports whether name is a family of the catalog or carries a
// prefix of kube-apiserver's metrics: a sample line alone (no # HELP or
// # TYPE) counts as exposition only with such a name, so a stray note
// holding "ticket 4711" is not read as /metrics.
func IsKnownName(name string) bool {
	for _, m := range catalog {
		for _, n := range m.Names() {
			if n == name {
				return true
			}
		}
	}
	for _, p := range exposedPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
