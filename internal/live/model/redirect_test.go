package model

import (
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
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
