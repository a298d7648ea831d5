package metrics

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The real capture's figures: pods watches by scope, and the pods and
// configmaps event sizes (metrics.txt of seed-repro/t2).
func TestWatchEvidenceFromRealCapture(t *testing.T) {
	f, err := os.Open(filepath.Join(captures, "t2", "metrics.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := Parse(f, "metrics.txt")
	if err != nil {
		t.Fatal(err)
	}
	wr := WatchRequests(s)
	if diff := cmp.Diff(map[string]float64{ScopeCluster: 1, ScopeNamespace: 3}, wr["/pods"]); diff != "" {
		t.Errorf("pods watches by scope (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]float64{ScopeNamespace: 1, ScopeResource: 1}, wr["/configmaps"]); diff != "" {
		t.Errorf("configmaps watches by scope (-want +got):\n%s", diff)
	}
	sizes := EventSizeBuckets(s)
	pods := sizes["/pods"]
	want := []SizeBucket{{1024, 6}, {2048, 6}, {4096, 6}, {8192, 6}, {16384, 6}, {32768, 4908}, {65536, 4908}, {131072, 4908}, {math.Inf(1), 4908}}
	if diff := cmp.Diff(want, pods); diff != "" {
		t.Errorf("pods event sizes (-want +got):\n%s", diff)
	}
	if cm := sizes["/configmaps"]; len(cm) == 0 || cm[len(cm)-1].Count != 10 {
		t.Errorf("configmaps event sizes: %v, want 10 events in all", cm)
	}
}

func TestWatchEvidenceAbsent(t *testing.T) {
	s := NewSample("empty", nil)
	if WatchRequests(s) != nil || EventSizeBuckets(s) != nil {
		t.Error("a sample without the families gave figures")
	}
}

// TestTerminatedByReason reads every shape apiserver_terminated_watchers_total
// has had: a "group.resource" label before 1.34, group and resource since,
// and a reason label where a server adds one; series that are not counts
// are left out.
func TestTerminatedByReason(t *testing.T) {
	tests := []struct {
		name, text string
		want       map[string]map[string]float64
	}{
		{
			name: "1.37: group and resource",
			text: "# TYPE apiserver_terminated_watchers_total counter\n" +
				`apiserver_terminated_watchers_total{group="",resource="configmaps"} 3` + "\n" +
				`apiserver_terminated_watchers_total{group="apps",resource="deployments"} 1` + "\n",
			want: map[string]map[string]float64{"/configmaps": {"": 3}, "apps/deployments": {"": 1}},
		},
		{
			name: "before 1.34: group.resource",
			text: "# TYPE apiserver_terminated_watchers_total counter\n" +
				`apiserver_terminated_watchers_total{resource="configmaps"} 2` + "\n" +
				`apiserver_terminated_watchers_total{resource="deployments.apps"} 4` + "\n",
			want: map[string]map[string]float64{"/configmaps": {"": 2}, "apps/deployments": {"": 4}},
		},
		{
			name: "with a reason label",
			text: "# TYPE apiserver_terminated_watchers_total counter\n" +
				`apiserver_terminated_watchers_total{group="",resource="configmaps",reason="buffer_full"} 5` + "\n" +
				`apiserver_terminated_watchers_total{group="",resource="configmaps",reason="stalled"} 2` + "\n",
			want: map[string]map[string]float64{"/configmaps": {"buffer_full": 5, "stalled": 2}},
		},
		{
			name: "negative and NaN left out",
			text: "# TYPE apiserver_terminated_watchers_total counter\n" +
				`apiserver_terminated_watchers_total{group="",resource="configmaps"} -1` + "\n" +
				`apiserver_terminated_watchers_total{group="",resource="pods"} NaN` + "\n" +
				`apiserver_terminated_watchers_total{group="",resource="secrets"} 1` + "\n",
			want: map[string]map[string]float64{"/secrets": {"": 1}},
		},
		{name: "absent", text: "# TYPE go_goroutines gauge\ngo_goroutines 3\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse(strings.NewReader(tc.text), "metrics.txt")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, TerminatedByReason(s)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
