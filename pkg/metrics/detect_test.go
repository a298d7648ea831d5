package metrics

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDetectVersion(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     VersionInfo
	}{
		{
			name: "build info",
			in:   "# TYPE kubernetes_build_info gauge\nkubernetes_build_info{git_version=\"v1.36.3\",major=\"1\",minor=\"36\"} 1\n",
			want: VersionInfo{Release: Release{1, 36}, GitVersion: "v1.36.3", From: "kubernetes_build_info", Min: Release{1, 36}, Max: Release{1, 36}},
		},
		{
			name: "unparsable build info, no evidence",
			in:   "# TYPE kubernetes_build_info gauge\nkubernetes_build_info{git_version=\"devel\"} 1\n# TYPE go_goroutines gauge\ngo_goroutines 10\n",
			want: VersionInfo{Release: NewestRelease(), From: "assumed", Evidence: []string{"no version evidence: assuming " + NewestRelease().String()}},
		},
		{
			name: "watch cache gauges of 1.30", // the resource label alone says 1.33 or older
			in:   "# TYPE watch_cache_capacity gauge\nwatch_cache_capacity{resource=\"pods\"} 100\n",
			want: VersionInfo{Release: Release{1, 30}, From: "metric names and labels", Max: Release{1, 30},
				Evidence: []string{"watch_cache_capacity has labels resource (v1.33 or older)", "watch_cache_capacity without apiserver_watch_cache_resource_version (v1.30 or older)"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse(strings.NewReader(tc.in), "metrics.txt")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, detectVersion(s)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestHelpStability(t *testing.T) {
	for help, want := range map[string]string{
		"[BETA] Number of watchers": "BETA",
		"[STABLE] x":                "STABLE",
		"[ALPHA] x":                 "ALPHA",
		"[INTERNAL] x":              "INTERNAL",
		"[DEPRECATED] x":            "",
		"[BETA x":                   "",
		"Number of watchers [BETA]": "",
		"":                          "",
	} {
		if got := helpStability(help); got != want {
			t.Errorf("helpStability(%q) = %q, want %q", help, got, want)
		}
	}
}

// TestIsKnownName: a catalog family or a kube-apiserver prefix, so that a
// note holding "ticket 4711" is not read as exposition.
func TestIsKnownName(t *testing.T) {
	for name, want := range map[string]bool{
		"apiserver_longrunning_requests": true,
		"watch_cache_capacity":           true,
		"go_goroutines":                  true,
		"process_start_time_seconds":     true,
		"apiserver_anything_new":         true,
		"ticket":                         false,
		"node_cpu_seconds_total":         false,
		"":                               false,
	} {
		if got := IsKnownName(name); got != want {
			t.Errorf("IsKnownName(%q) = %v, want %v", name, got, want)
		}
	}
}
