package model

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
)

func TestRedactServer(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://user:PASS@10.0.0.1:6443":      "https://10.0.0.1:6443",
		"https://token@api.example.com/k8s/c1": "https://api.example.com/k8s/c1",
		"https://api.example.com:6443":         "https://api.example.com:6443",
		"10.0.0.1:6443":                        "10.0.0.1:6443",
		"user:PASS@10.0.0.1:6443":              "10.0.0.1:6443",
		"https://u:%zz@h":                      "https://h",
		"https://h/a@b":                        "https://h/a@b",
	} {
		if got := RedactServer(in); got != want {
			t.Errorf("RedactServer(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRedactLocation(t *testing.T) {
	t.Parallel()
	from, _ := url.Parse("https://10.0.0.1:6443/metrics")
	got := map[string]string{}
	for _, loc := range []string{"http://u:p@10.0.0.9:8080/steal?token=x", "/login?next=/metrics", "", "http://[::1"} {
		got[loc] = redactLocation(from, loc)
	}
	want := map[string]string{
		"http://u:p@10.0.0.9:8080/steal?token=x": "http://10.0.0.9:8080",
		"/login?next=/metrics":                   "https://10.0.0.1:6443",
		"":                                       "",
		"http://[::1":                            "an unreadable Location",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("redactLocation (-want +got):\n%s", diff)
	}
}

// TestNoRedirectIsFollowed: a 302 to another loopback port, answering one
// of our GETs, is a *RedirectError naming the server and the Location's
// host; nothing reaches that host, the token least of all. (The
// EndpointSlices list's: discovery's TestNoRedirectIsFollowedByTheList.)
func TestNoRedirectIsFollowed(t *testing.T) {
	t.Parallel()
	sink := fakeapiserver.StartSink(t)
	s, c := hostileClient(t, "/metrics", &fakeapiserver.Hostility{Kind: fakeapiserver.Redirect, Location: sink.URL + "/steal?token=x"})
	err := getMetrics(c)
	var re *RedirectError
	if !errors.As(err, &re) {
		t.Fatalf("GET /metrics = %v, want a *RedirectError", err)
	}
	want := s.Address() + ": GET /metrics: answered HTTP 302 with a redirect to " + sink.URL + ": not followed"
	if msg := err.Error(); !strings.Contains(msg, want) || strings.Contains(msg, "steal") {
		t.Errorf("error %q, want %q and no path of the Location", msg, want)
	}
	if got := sink.Requests(); len(got) != 0 {
		t.Errorf("the redirect was followed: the other port got %d request(s), Authorization %q", len(got), got)
	}
}
