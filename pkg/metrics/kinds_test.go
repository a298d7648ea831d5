package metrics

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPluralCandidates(t *testing.T) {
	tests := []struct {
		kind string
		want []string
	}{
		{kind: "Pod", want: []string{"pods", "pod"}},
		{kind: "Endpoints", want: []string{"endpointss", "endpoints", "endpointses"}},
		{kind: "Ingress", want: []string{"ingresss", "ingress", "ingresses"}},
		{kind: "NetworkPolicy", want: []string{"networkpolicys", "networkpolicy", "networkpolicies"}},
		{kind: "Gateway", want: []string{"gateways", "gateway"}},
		{kind: "Y", want: []string{"ys", "y"}},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, pluralCandidates(tt.kind)); diff != "" {
				t.Errorf("pluralCandidates(%q) (-want +got):\n%s", tt.kind, diff)
			}
		})
	}
}

// TestResolveKinds merges a kind row into the one resource of its group
// whose name is a plural of the kind, and keeps (and notes) kind rows that
// match none.
func TestResolveKinds(t *testing.T) {
	e := &extractor{snap: &Snapshot{}, rows: map[rowKey]*Resource{}}
	pods := e.row(rowKey{resource: "pods"})
	pods.Watchers = 3
	podKind := e.row(rowKey{kind: "Pod"})
	podKind.WatchEvents = 7
	e.row(rowKey{group: "example.com", kind: "Widget"}).WatchEvents = 2

	e.resolveKinds()

	if _, ok := e.rows[rowKey{kind: "Pod"}]; ok {
		t.Error("the Pod kind row was kept, want it merged into pods")
	}
	if got := e.rows[rowKey{resource: "pods"}]; got.Watchers != 3 || got.WatchEvents != 7 {
		t.Errorf("pods = {Watchers: %v, WatchEvents: %v}, want {3, 7}", got.Watchers, got.WatchEvents)
	}
	if _, ok := e.rows[rowKey{group: "example.com", kind: "Widget"}]; !ok {
		t.Error("the Widget kind row was dropped, want it kept: no resource of that name")
	}
	want := []string{"watch events labelled by kind (before 1.34) with no resource of that name in the sample, kept as kind rows: Kind=Widget.example.com"}
	if diff := cmp.Diff(want, e.snap.Notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
}
