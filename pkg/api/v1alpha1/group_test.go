package v1alpha1

import (
	"encoding/json"
	"testing"
)

// TestFindingGroupJSON: a group's JSON shape is its key, then count and
// the members' indices, as FindingGroup documents; unknown blocked
// minutes, seats and an empty request are left out.
func TestFindingGroupJSON(t *testing.T) {
	five := 5
	for _, tc := range []struct {
		name string
		g    FindingGroup
		want string
	}{
		{"full key", FindingGroup{Type: StuckInitialEvents, Severity: SeverityCritical, APIServer: "a", Client: "kubelet", Verb: "watch", Path: "/api/v1/pods",
			Resource: "pods", Phase: PhaseInitial, BlockedMinutes: &five, Seats: 1, GoroutinesEach: 3, Match: MatchExact, Count: 5, Findings: []int{0, 1, 2, 3, 4}},
			`{"type":"StuckInitialEvents","severity":"critical","apiserver":"a","client":"kubelet","verb":"watch","path":"/api/v1/pods","resource":"pods","phase":"initial","blockedMinutes":5,"seats":1,"goroutinesEach":3,"match":"exact","count":5,"findings":[0,1,2,3,4]}`},
		{"unmatched", FindingGroup{Type: SlowInitialEvents, Severity: SeverityWarning, APIServer: "a", Client: LabelUnmatched, Phase: PhaseInitial, GoroutinesEach: 1, Count: 5, Findings: []int{1, 3, 5, 7, 9}},
			`{"type":"SlowInitialEvents","severity":"warning","apiserver":"a","client":"\u003cunmatched\u003e","phase":"initial","goroutinesEach":1,"count":5,"findings":[1,3,5,7,9]}`},
	} {
		b, err := json.Marshal(tc.g)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, b, tc.want)
		}
	}
	if GroupAtLeast != 5 {
		t.Errorf("GroupAtLeast = %d: the tables of every golden with a storm change with it", GroupAtLeast)
	}
}
