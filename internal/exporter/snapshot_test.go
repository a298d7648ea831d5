package exporter

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/watches"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
)

func watchReq(user, level, path, resource string, seats int, start time.Time) apf.Request {
	return apf.Request{User: user, Verb: "watch", Path: path, Resource: resource, PriorityLevel: level, InitialSeats: seats, StartTime: start, IndexInQueue: -1}
}

func TestFillFoldsBeyondTheBounds(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 1, 0, 10, 0, 0, time.UTC)
	var rs []apf.Request
	// Users u0..u4 hold 5..1 seats of pods, started 0..4 minutes ago.
	for i := 0; i < 5; i++ {
		rs = append(rs, watchReq(fmt.Sprintf("u%d", i), "workload-low", "/api/v1/pods", "pods", 5-i, at.Add(-time.Duration(i)*time.Minute)))
	}
	rs = append(rs,
		watchReq("other", "global-default", "/apis/apps/v1/deployments", "deployments", 1, at.Add(-10*time.Minute)),
		watchReq("evil\nuser", "global-default", "/apis/apps/v1/deployments", "deployments", 1, at),
		apf.Request{User: "get-er", Verb: "get", PriorityLevel: "global-default", InitialSeats: 1, StartTime: at, IndexInQueue: -1},
		apf.Request{User: "queued", Verb: "watch", PriorityLevel: "global-default", InitialSeats: 1, IndexInQueue: 0},
	)
	limit := 49.0
	s := watches.Sample{
		Requests: &apf.Requests{HasDetails: true, Requests: rs},
		Metrics:  &watches.MetricsContext{Levels: map[string]watches.LevelSeats{"global-default": {Limit: &limit}, "exempt": {}}},
	}
	var snap instanceSnap
	snap.fill(s, at, bounds{users: 3, resources: 1, levels: 1})
	wantUsers := []userRow{
		{user: "u0", resource: "pods", watches: 1, seats: 5},
		{user: "u1", resource: "pods", watches: 1, seats: 4, oldest: 60},
		{user: "u2", resource: "pods", watches: 1, seats: 3, oldest: 120},
		// u3, u4, the user named "other" and `evil\u000auser`.
		{user: "other", resource: "other", watches: 4, seats: 5, oldest: 600},
	}
	if diff := cmp.Diff(wantUsers, snap.users, cmp.AllowUnexported(userRow{})); diff != "" {
		t.Errorf("users (-want +got):\n%s", diff)
	}
	wantRes := []resourceRow{
		{resource: "pods", level: "workload-low", watches: 5, oldest: 240},
		{resource: "other", level: "other", watches: 2, oldest: 600},
	}
	if diff := cmp.Diff(wantRes, snap.resources, cmp.AllowUnexported(resourceRow{})); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
	wantLevels := []levelRow{{level: "workload-low", seats: 15}, {level: "other", seats: 2, limit: &limit}}
	if diff := cmp.Diff(wantLevels, snap.levels, cmp.AllowUnexported(levelRow{})); diff != "" {
		t.Errorf("levels (-want +got):\n%s", diff)
	}
}

func TestResourceOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		r    apf.Request
		want string
	}{
		{apf.Request{Path: "/api/v1/namespaces/a/pods", Resource: "pods"}, "pods"},
		{apf.Request{Path: "/apis/apps/v1/deployments", Resource: "deployments"}, "deployments.apps"},
		{apf.Request{Path: "/apis/batch/v1/jobs", Resource: "jobs", Subresource: "status"}, "jobs.batch/status"},
	} {
		if got := resourceOf(tc.r); got != tc.want {
			t.Errorf("resourceOf(%s) = %q, want %q", tc.r.Path, got, tc.want)
		}
	}
}
