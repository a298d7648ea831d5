package discovery

import (
	"testing"

	"k8s.io/client-go/rest"
)

func TestHostOf(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ server, want string }{
		{"https://api.example.com:6443", "api.example.com:6443"},
		{"https://api.example.com:6443/k8s/clusters/c-abc", "api.example.com:6443"},
		{"10.0.0.7:6443", "10.0.0.7:6443"}, // no scheme: kept as written
		{"", ""},
	} {
		t.Run(tt.server, func(t *testing.T) {
			if got := HostOf(tt.server); got != tt.want {
				t.Errorf("HostOf(%q) = %q, want %q", tt.server, got, tt.want)
			}
		})
	}
}

func TestFallbackInstanceIsTheKubeconfigHostUnpinned(t *testing.T) {
	t.Parallel()
	got := fallbackInstance(&rest.Config{Host: "https://api.example.com:6443"})
	if got.Name != "api.example.com:6443" || got.Pinned {
		t.Errorf("fallbackInstance = %+v, want api.example.com:6443, not pinned", got)
	}
}
