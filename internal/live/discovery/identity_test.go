package discovery

import (
	"testing"
)

func TestIDHashOf(t *testing.T) {
	t.Parallel()
	long := `x{apiserver_id_hash="sha256:` + string(make([]byte, 65)) + `"} 1`
	for _, tc := range []struct{ text, want string }{
		{"go_goroutines 3\n", ""},
		{`apiserver_authentication_config_controller_automatic_reloads_total{apiserver_id_hash="sha256:abc",status="success"} 1` + "\n", "sha256:abc"},
		{`a{apiserver_id_hash=""} 1`, ""},
		{`a{apiserver_id_hash="unterminated`, ""},
		{long, ""},
	} {
		if got := idHashOf([]byte(tc.text)); got != tc.want {
			t.Errorf("idHashOf(%q) = %q, want %q", tc.text, got, tc.want)
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
