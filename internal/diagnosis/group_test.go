package diagnosis

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// TestGroupFindings: findings alike in everything the table shows but
// their goroutines are one group once api.GroupAtLeast of them are; a
// difference in any key field (here blocked minutes, the client, the
// server) makes another bucket; groups come in the order of their first
// member.
func TestGroupFindings(t *testing.T) {
	one, two := 1, 2
	stuck := func(id int64, server, user string, blocked *int) api.Finding {
		return api.Finding{Type: api.StuckInitialEvents, Severity: api.SeverityCritical, APIServer: server, Phase: api.PhaseInitial, BlockedMinutes: blocked,
			GoroutineIDs: []int64{id, id + 1}, Watcher: api.Watcher{GoroutineID: id},
			Client: &api.Client{User: user, Verb: "watch", Path: "/api/v1/pods", Resource: "pods", Seats: 1, Match: api.MatchExact}}
	}
	var fs []api.Finding
	for i := range 6 {
		fs = append(fs, stuck(int64(100+10*i), "a", "kubelet", &two))
	}
	fs = append(fs, stuck(900, "a", "kubelet", &one), stuck(910, "b", "kubelet", &two), stuck(920, "a", "operator", &two))
	for i := range 5 {
		fs = append(fs, api.Finding{Type: api.SlowInitialEvents, Severity: api.SeverityWarning, APIServer: "a", Phase: api.PhaseInitial, GoroutineIDs: []int64{int64(2000 + i)}})
	}
	fs[2], fs[6] = fs[6], fs[2] // a finding unlike the storm in its midst
	got := groupFindings(fs)
	want := []api.FindingGroup{
		{Type: api.StuckInitialEvents, Severity: api.SeverityCritical, APIServer: "a", Client: "kubelet", Verb: "watch", Path: "/api/v1/pods", Resource: "pods",
			Phase: api.PhaseInitial, BlockedMinutes: &two, Seats: 1, GoroutinesEach: 2, Match: api.MatchExact, Count: 6, Findings: []int{0, 1, 3, 4, 5, 6}},
		{Type: api.SlowInitialEvents, Severity: api.SeverityWarning, APIServer: "a", Client: api.LabelUnmatched, Phase: api.PhaseInitial, GoroutinesEach: 1,
			Count: 5, Findings: []int{9, 10, 11, 12, 13}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("groups (-want +got):\n%s", diff)
	}
	if got := groupFindings(fs[:4]); got != nil {
		t.Errorf("fewer than api.GroupAtLeast alike: %+v, want none", got)
	}
	// The group owns its key: a member changed later leaves it as found.
	*fs[0].BlockedMinutes = 3
	if *got[0].BlockedMinutes != 2 {
		t.Errorf("the group shares its first member's BlockedMinutes")
	}
}
