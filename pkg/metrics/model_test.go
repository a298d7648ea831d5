package metrics

import (
	"math"
	"testing"
)

func TestResourceNames(t *testing.T) {
	for _, tc := range []struct {
		r         Resource
		key, name string
	}{
		{Resource{Resource: "pods"}, "/pods", "pods"},
		{Resource{Group: "apps", Resource: "deployments"}, "apps/deployments", "deployments.apps"},
		{Resource{Group: "apps", Kind: "Deployment"}, "apps/Kind=Deployment", "Kind=Deployment.apps"},
		{Resource{Kind: "Pod"}, "/Kind=Pod", "Kind=Pod"},
		{Resource{Resource: "pods", Kind: "Pod"}, "/pods", "pods"},
	} {
		if got := tc.r.Key(); got != tc.key {
			t.Errorf("%+v Key() = %q, want %q", tc.r, got, tc.key)
		}
		if got := tc.r.Name(); got != tc.name {
			t.Errorf("%+v Name() = %q, want %q", tc.r, got, tc.name)
		}
	}
}

// TestResourceCached: a row is served from the watch cache when any watch
// cache metric has a series for it; watchers alone do not say so.
func TestResourceCached(t *testing.T) {
	nan := math.NaN()
	absent := Resource{Watchers: 3, InitEvents: nan, TerminatedWatchers: nan, EventsReceived: nan, EventsDispatched: nan,
		CacheInitializations: nan, CacheCapacity: nan, CacheResourceVersion: nan}
	if absent.Cached() {
		t.Error("a row without watch cache series is Cached")
	}
	for name, set := range map[string]func(*Resource){
		"init events":    func(r *Resource) { r.InitEvents = 0 },
		"capacity":       func(r *Resource) { r.CacheCapacity = 100 },
		"resource vers.": func(r *Resource) { r.CacheResourceVersion = 7 },
		"dispatched":     func(r *Resource) { r.EventsDispatched = 0 },
	} {
		r := absent
		set(&r)
		if !r.Cached() {
			t.Errorf("%s: not Cached", name)
		}
	}
}

func TestVersionInfoString(t *testing.T) {
	r30, r33, r37 := Release{1, 30}, Release{1, 33}, Release{1, 37}
	for _, tc := range []struct {
		v    VersionInfo
		want string
	}{
		{VersionInfo{Release: r37, GitVersion: "v1.37.2", From: "kubernetes_build_info"}, "v1.37 (kubernetes_build_info v1.37.2)"},
		{VersionInfo{Release: r33, From: "given"}, "v1.33 (given)"},
		{VersionInfo{Release: r37, From: "assumed"}, "v1.37 (assumed: no version evidence)"},
		{VersionInfo{Release: r33, From: "metric names and labels", Min: r33, Max: r33}, "v1.33 (metric names and labels)"},
		{VersionInfo{Release: r37, From: "metric names and labels", Min: r33}, "v1.33 or newer (metric names and labels; v1.37 names expected)"},
		{VersionInfo{Release: r30, From: "metric names and labels", Max: r30}, "v1.30 or older (metric names and labels; v1.30 names expected)"},
		{VersionInfo{Release: r33, From: "metric names and labels", Min: r30, Max: r33}, "v1.30 to v1.33 (metric names and labels; v1.33 names expected)"},
	} {
		if got := tc.v.String(); got != tc.want {
			t.Errorf("%+v:\n got %q\nwant %q", tc.v, got, tc.want)
		}
	}
}
