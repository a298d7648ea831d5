package cli

import (
	"strings"
	"testing"
)

func TestNormalizeAddress(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, server, want, err string }{
		{"10.0.0.1", "https://api.example.com:6443", "10.0.0.1:6443", ""},
		{"10.0.0.1:443", "https://api.example.com:6443", "10.0.0.1:443", ""},
		{"[fd00::1]:6443", "https://api.example.com", "[fd00::1]:6443", ""},
		{"fd00::1", "https://api.example.com", "[fd00::1]:443", ""},
		{"https://10.0.0.2:8443/", "https://api.example.com", "10.0.0.2:8443", ""},
		{"api.internal", "https://api.example.com", "api.internal:443", ""},
		{"host:x", "https://api.example.com", "", `port "x" is not a number`},
	} {
		got, err := normalizeAddress(tc.in, tc.server)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("normalizeAddress(%q) error = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("normalizeAddress(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}
