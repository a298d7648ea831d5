package fakeapiserver

import (
	"net/http"
	"testing"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/golden"
)

func TestLeasesList(t *testing.T) {
	t.Parallel()
	s := Start(t, golden.Fixture("t2"))
	if code, body := get(t, s, TokenAdmin, LeasesPath); code != http.StatusOK || body != `{"apiVersion":"coordination.k8s.io/v1","items":[],"kind":"LeaseList","metadata":{}}`+"\n" {
		t.Errorf("no leases: %d %s", code, body)
	}
	if code, _ := get(t, s, TokenNoDebug, LeasesPath); code != http.StatusForbidden {
		t.Errorf("a user without the rule: %d, want 403", code)
	}
	s.Leases = []Lease{{Name: "apiserver-a", Hostname: "cp-a", Holder: "apiserver-a_1", Renewed: time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC), DurationSeconds: 3600}}
	want := `{"apiVersion":"coordination.k8s.io/v1","items":[{"metadata":{"labels":{"apiserver.kubernetes.io/identity":"kube-apiserver","kubernetes.io/hostname":"cp-a"},"name":"apiserver-a","namespace":"kube-system"},"spec":{"holderIdentity":"apiserver-a_1","leaseDurationSeconds":3600,"renewTime":"2026-12-03T07:00:00.000000Z"}}],"kind":"LeaseList","metadata":{}}` + "\n"
	if code, body := get(t, s, TokenAdmin, LeasesPath); code != http.StatusOK || body != want {
		t.Errorf("one lease: %d %s", code, body)
	}
}
