package metrics

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCatalogPerRelease checks the mapping against the metric definitions
// read from each release's k8s.io/apiserver source (testdata/upstream).
func TestCatalogPerRelease(t *testing.T) {
	tests := []struct {
		release Release
		// changed lists what this release changed compared with the one
		// before, as read from the source: the table documents the
		// per-release differences and the subtest checks them.
		changed []string
	}{
		{Release{1, 30}, nil},
		{Release{1, 31}, []string{"+apiserver_watch_cache_resource_version{resource}"}},
		{Release{1, 32}, nil},
		{Release{1, 33}, nil},
		{Release{1, 34}, []string{
			"apiserver_init_events_total{resource} -> {group,resource}",
			"apiserver_terminated_watchers_total{resource} -> {group,resource}",
			"apiserver_watch_cache_events_dispatched_total{resource} -> {group,resource}",
			"apiserver_watch_cache_events_received_total{resource} -> {group,resource}",
			"apiserver_watch_cache_initializations_total{resource} -> {group,resource}",
			"apiserver_watch_cache_resource_version{resource} -> {group,resource}",
			"apiserver_watch_events_sizes{group,version,kind} -> {group,version,resource}",
			"apiserver_watch_events_total{group,version,kind} -> {group,version,resource}",
			"watch_cache_capacity{resource} -> {group,resource}",
		}},
		{Release{1, 35}, nil},
		{Release{1, 36}, []string{"apiserver_watch_list_duration_seconds ALPHA -> BETA"}},
		{Release{1, 37}, []string{
			"-apiserver_flowcontrol_request_concurrency_in_use{priority_level,flow_schema}",
			"-apiserver_flowcontrol_request_concurrency_limit{priority_level}",
			"apiserver_watch_events_sizes ALPHA -> BETA",
			"apiserver_watch_events_total ALPHA -> BETA",
		}},
	}
	if len(tests) != len(releases) {
		t.Fatalf("%d releases in the table, %d in the catalog", len(tests), len(releases))
	}
	var prev map[string]fact
	for i, tt := range tests {
		t.Run(tt.release.String(), func(t *testing.T) {
			if releases[i].Release != tt.release {
				t.Fatalf("catalog release %d is %s, table says %s", i, releases[i].Release, tt.release)
			}
			facts := readFacts(t, factsFile(tt.release))

			// Every variant the catalog says is defined in this release is
			// in the source with the same type and labels, in order; every
			// other variant is not.
			for _, m := range catalog {
				for _, v := range m.Variants {
					f, ok := facts[v.Name]
					in := v.In(tt.release)
					switch {
					case v.Scheme == ByNothing:
						// process collectors: not in k8s.io/apiserver.
						if ok {
							t.Errorf("%s: %s is defined in k8s.io/apiserver, the catalog says client_golang", m.ID, v.Name)
						}
					case in && !ok:
						t.Errorf("%s: catalog says %s is defined in %s; the source has no such metric", m.ID, v.Name, tt.release)
					case in:
						if f.Type != v.Type {
							t.Errorf("%s: %s type: catalog %s, source %s (%s)", m.ID, v.Name, v.Type, f.Type, f.Pos)
						}
						if diff := cmp.Diff(f.Labels, v.Labels); diff != "" {
							t.Errorf("%s: %s labels (-source +catalog) at %s:\n%s", m.ID, v.Name, f.Pos, diff)
						}
						if got := v.StabilityIn(tt.release); got != f.Stability {
							t.Errorf("%s: %s stability: catalog %s, source %s (%s)", m.ID, v.Name, got, f.Stability, f.Pos)
						}
					case ok && sameSet(v.Labels, sortedCopy(f.Labels)):
						t.Errorf("%s: catalog says %s{%s} is not defined in %s; the source has it at %s", m.ID, v.Name, strings.Join(v.Labels, ","), tt.release, f.Pos)
					}
					// A Source citing this release's module must point at
					// the definition.
					if mod, pos, ok := strings.Cut(v.Source, " "); ok && mod == releases[i].ReadFrom && v.In(tt.release) {
						pos, _, _ = strings.Cut(pos, " ")
						if pos != f.Pos {
							t.Errorf("%s: %s Source %q, the definition is at %s", m.ID, v.Name, v.Source, f.Pos)
						}
					}
				}
			}

			// Families the catalog ignores are defined from their release on.
			for name, since := range ignored {
				_, ok := facts[name]
				if want := since.IsZero() || tt.release.Compare(since) >= 0; ok != want {
					t.Errorf("ignored %s (since %s): defined in %s = %v, source says %v", name, since, tt.release, want, ok)
				}
			}
			// Every watch family of the release is either read or ignored,
			// so none of them would be reported as unknown.
			known := map[string]bool{}
			for _, n := range knownNames() {
				known[n] = true
			}
			for name, f := range facts {
				if _, ign := ignored[name]; watchNamespace(name) && !known[name] && !ign {
					t.Errorf("%s (%s) is a watch metric the catalog neither reads nor ignores", name, f.Pos)
				}
			}

			// The documented changes are the ones in the source.
			if prev != nil {
				if diff := cmp.Diff(tt.changed, changes(prev, facts)); diff != "" {
					t.Errorf("changes from the previous release (-table +source):\n%s", diff)
				}
			}
			prev = facts
		})
	}
}

// changes lists what happened to the catalog's metric families between two
// releases' facts, in the notation of the test table.
func changes(a, b map[string]fact) []string {
	var out []string
	for _, name := range knownNames() {
		fa, inA := a[name]
		fb, inB := b[name]
		lbl := func(f fact) string { return "{" + strings.Join(f.Labels, ",") + "}" }
		switch {
		case inA && !inB:
			out = append(out, "-"+name+lbl(fa))
		case !inA && inB:
			out = append(out, "+"+name+lbl(fb))
		case inA && inB:
			if lbl(fa) != lbl(fb) {
				out = append(out, fmt.Sprintf("%s%s -> %s", name, lbl(fa), lbl(fb)))
			}
			if fa.Stability != fb.Stability {
				out = append(out, fmt.Sprintf("%s %s -> %s", name, fa.Stability, fb.Stability))
			}
		}
	}
	return out
}

func TestVariantIn(t *testing.T) {
	v := Variant{Since: Release{1, 31}, Until: Release{1, 33}}
	tests := []struct {
		r    Release
		want bool
	}{
		{Release{1, 30}, false},
		{Release{1, 31}, true},
		{Release{1, 33}, true},
		{Release{1, 34}, false},
		{Release{2, 0}, false},
	}
	for _, tt := range tests {
		t.Run(tt.r.String(), func(t *testing.T) {
			if got := v.In(tt.r); got != tt.want {
				t.Errorf("In(%s) = %v, want %v", tt.r, got, tt.want)
			}
		})
	}
}
