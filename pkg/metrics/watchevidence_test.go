package metrics

import (
	"math"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The real capture's figures: pods watches by scope, and the pods and
// configmaps event sizes (metrics.txt of seed-repro/t2).
func TestWatchEvidenceFromRealCapture(t *testing.T) {
	f, err := os.Open("../../testdata/kube-apiserver-v1.37.2/seed-repro/t2/metrics.txt")
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
