package discovery

import (
	"strings"
	"testing"
)

// TestIDHashOf: only "sha256:" and 64 lowercase hex digits is a hash;
// anything else (issue 35: ESC and U+202E in the value) counts as none.
func TestIDHashOf(t *testing.T) {
	t.Parallel()
	hash := LeaseHash("apiserver-a")
	line := func(v string) string {
		return `apiserver_authentication_config_controller_automatic_reloads_total{apiserver_id_hash="` + v + `",status="success"} 1` + "\n"
	}
	for _, tc := range []struct{ name, text, want string }{
		{"none", "go_goroutines 3\n", ""},
		{"kube-apiserver's", line(hash), hash},
		{"empty", line(""), ""},
		{"unterminated", `a{apiserver_id_hash="` + hash, ""},
		{"short", line("sha256:abc"), ""},
		{"63 digits", line(hash[:len(hash)-1]), ""},
		{"65 digits", line(hash + "0"), ""},
		{"uppercase", line("sha256:" + strings.ToUpper(hash[7:])), ""},
		{"other algorithm", line("sha512:" + hash[7:]), ""},
		{"no prefix", line(hash[7:] + "1234567"), ""},
		{"ESC and U+202E", line("sha256:" + hash[7:40] + "\x1b[31m\u202e" + hash[48:]), ""},
	} {
		if got := idHashOf([]byte(tc.text)); got != tc.want {
			t.Errorf("%s: idHashOf(%q) = %q, want %q", tc.name, tc.text, got, tc.want)
		}
	}
}

// The hash kube-apiserver labels its metrics with is the SHA-256 of its
// identity lease's name (printf apiserver-a | sha256sum).
func TestLeaseHash(t *testing.T) {
	t.Parallel()
	if got, want := LeaseHash("apiserver-a"), "sha256:b5b662adf0e40b9253722f985e321a40f8f9592881365a3ffc91fb56c54da2dc"; got != want {
		t.Errorf("leaseHash = %q, want %q", got, want)
	}
}
