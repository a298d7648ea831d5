package discovery

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

func TestLiveLeases(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC)
	leases := []identityLease{
		{Name: "apiserver-a", Hostname: "cp-a", Holder: "apiserver-a_1", Renewed: now.Add(-10 * time.Second), Duration: time.Hour},
		{Name: "apiserver-b", Holder: "apiserver-b_2", Renewed: now.Add(-time.Hour), Duration: time.Hour},
		{Name: "apiserver-c", Hostname: "cp-c", Holder: "apiserver-c_3", Renewed: now.Add(-2 * time.Hour), Duration: time.Hour},
		{Name: "apiserver-d", Holder: "apiserver-d_4"},
	}
	live, notes := liveLeases(leases, now)
	var names []string
	for _, l := range live {
		names = append(names, l.label())
	}
	// Renewed exactly its duration ago is still live; never renewed is not.
	if diff := cmp.Diff([]string{"cp-a", "apiserver-b"}, names); diff != "" {
		t.Errorf("live leases (-want +got):\n%s", diff)
	}
	if len(notes) != 2 || !strings.Contains(notes[0], "identity lease cp-c (holder apiserver-c_3) was last renewed 2026-12-03T05:00:00Z, more than its 1h0m0s ago") {
		t.Errorf("notes %q", notes)
	}
}

// countLive counts the live identity leases; without them (refused, or
// none listed) it counts the ready endpoints, and a refusal names the
// missing rule.
func TestCountLive(t *testing.T) {
	t.Parallel()
	now := time.Now()
	endpoints := []model.Instance{{Name: "10.0.0.1:6443", Pinned: true}, {Name: "10.0.0.2:6443", Pinned: true}}
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	s.Leases = []fakeapiserver.Lease{
		{Name: "apiserver-b", Hostname: "cp-b", Renewed: now, DurationSeconds: 3600},
		{Name: "apiserver-a", Hostname: "cp-a", Renewed: now, DurationSeconds: 3600},
		{Name: "apiserver-c", Hostname: "cp-c", Renewed: now, DurationSeconds: 3600},
	}
	if got, _ := CountLive(context.Background(), fakeapiserver.RESTConfig(t, s, fakeapiserver.TokenAdmin), nil, now); got.byHash[LeaseHash("apiserver-b")] != "cp-b" || len(got.byHash) != 3 {
		t.Errorf("lease hashes %v, want each live lease's", got.byHash)
	}
	for _, tc := range []struct {
		name   string
		token  string
		leases bool
		want   liveInstances
		note   string
	}{
		{"leases", fakeapiserver.TokenAdmin, true, liveInstances{Count: 3, Source: api.LiveFromLeases, Names: []string{"cp-a", "cp-b", "cp-c"}}, ""},
		{"more endpoints than leases", fakeapiserver.TokenAdmin, true, liveInstances{Count: 4, Source: api.LiveFromEndpointSlices, Names: []string{"10.0.0.1:6443", "10.0.0.2:6443", "10.0.0.3:6443", "10.0.0.4:6443"}}, "3 live API server identity lease(s) (cp-a, cp-b, cp-c) but 4 ready endpoints of default/kubernetes: counting 4 instances (instances sharing a hostname share a lease)"},
		{"no lease listed", fakeapiserver.TokenAdmin, false, liveInstances{Count: 2, Source: api.LiveFromEndpointSlices, Names: []string{"10.0.0.1:6443", "10.0.0.2:6443"}}, ""},
		{"refused", fakeapiserver.TokenNoDebug, true, liveInstances{Count: 2, Source: api.LiveFromEndpointSlices, Names: []string{"10.0.0.1:6443", "10.0.0.2:6443"}},
			`cannot list the API server identity leases (kube-system, apiserver.kubernetes.io/identity=kube-apiserver): forbidden: missing RBAC rule apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["list"] in namespace "kube-system"; the instances are counted from the default/kubernetes EndpointSlices`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := s
			if !tc.leases {
				srv = fakeapiserver.Start(t, golden.Fixture("t2"))
			}
			eps := endpoints
			if tc.want.Count == 4 {
				eps = append(append([]model.Instance(nil), endpoints...), model.Instance{Name: "10.0.0.3:6443", Pinned: true}, model.Instance{Name: "10.0.0.4:6443", Pinned: true})
			}
			got, notes := CountLive(context.Background(), fakeapiserver.RESTConfig(t, srv, tc.token), eps, now)
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreUnexported(liveInstances{})); diff != "" {
				t.Errorf("live instances (-want +got):\n%s", diff)
			}
			if tc.note == "" && len(notes) != 0 || tc.note != "" && (len(notes) != 1 || notes[0] != tc.note) {
				t.Errorf("notes %q, want %q", notes, tc.note)
			}
		})
	}
}
