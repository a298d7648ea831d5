package fakeapiserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// TestCopyCaptureAndKubeconfig: a copied capture carries the given time,
// and the kubeconfig reaches the server with its token.
func TestCopyCaptureAndKubeconfig(t *testing.T) {
	dir := CopyCapture(t, golden.Fixture("t1"), "2026-11-29T10:23:09Z")
	b, err := os.ReadFile(filepath.Join(dir, "captured-at.txt"))
	if err != nil || strings.TrimSpace(string(b)) != "2026-11-29T10:23:09Z" {
		t.Errorf("captured-at.txt = %q, %v", b, err)
	}
	s := Start(t, dir)
	kc := Kubeconfig(t, s, TokenAdmin)
	cfg, err := os.ReadFile(kc)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{s.URL, TokenAdmin, "certificate-authority"} {
		if !strings.Contains(string(cfg), want) {
			t.Errorf("kubeconfig has no %q:\n%s", want, cfg)
		}
	}
}

// TestEditCaptureAndRESTConfig: EditCapture passes each file through the
// edit by name, and RESTConfig reads the kubeconfig into a client
// configuration the fake server accepts.
func TestEditCaptureAndRESTConfig(t *testing.T) {
	src := golden.Fixture("t1")
	dir := EditCapture(t, src, func(name string, b []byte) []byte {
		if name == "captured-at.txt" {
			return []byte("edited\n")
		}
		return b
	})
	for name, want := range map[string]string{"captured-at.txt": "edited\n", "apf-requests.txt": ""} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if want == "" {
			orig, err := os.ReadFile(filepath.Join(src, name))
			if err != nil {
				t.Fatal(err)
			}
			want = string(orig)
		}
		if string(got) != want {
			t.Errorf("%s: got %d bytes, want %d", name, len(got), len(want))
		}
	}
	s := Start(t, src)
	cfg := RESTConfig(t, s, TokenAdmin)
	if cfg.Host != s.URL || cfg.BearerToken != TokenAdmin || len(cfg.CAData) == 0 && cfg.CAFile == "" {
		t.Errorf("RESTConfig = host %q token %q, want %q with %q and a CA", cfg.Host, cfg.BearerToken, s.URL, TokenAdmin)
	}
}

// TestRESTConfigAt: the configuration reaches url (a balancer in front of
// s) with s's certificate and the token.
func TestRESTConfigAt(t *testing.T) {
	s := Start(t, golden.Fixture("t2"))
	lb := StartBalancer(t, RoundRobin(1), s)
	cfg := RESTConfigAt(t, s, lb.URL(), TokenAdmin)
	if cfg.Host != lb.URL() || cfg.BearerToken != TokenAdmin || len(cfg.CAData) == 0 && cfg.CAFile == "" {
		t.Errorf("RESTConfigAt = host %q token %q, want %q with %q and a CA", cfg.Host, cfg.BearerToken, lb.URL(), TokenAdmin)
	}
}
