package cli

import (
	"strings"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
)

func TestServeRefusesBadFlags(t *testing.T) {
	s := fakeapiserver.Start(t)
	kc := fakeapiserver.Kubeconfig(t, s, fakeapiserver.TokenAdmin)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--interval", "0s"}, `invalid --interval 0s: must be positive`},
		{[]string{"--jitter", "1"}, `invalid --jitter 1: want at least 0 and below 1`},
		{[]string{"--interval", "10m", "--max-backoff", "1m"}, `invalid --max-backoff 1m0s: must be at least --interval 10m0s`},
		{[]string{"--top-users", "0"}, `invalid --top-users 0: at least 1`},
		{[]string{"--log-level", "loud"}, `unsupported --log-level "loud": use one of debug, info, warn, error`},
		{[]string{"--listen-address", "nonsense"}, `invalid --listen-address "nonsense"`},
		{[]string{"--trace-window", "1s"}, `invalid --trace-window 1s: 0 (never trace) or at least 2s`},
		{[]string{"--trace-window", "-1s"}, `invalid --trace-window -1s: 0 (never trace) or at least 2s`},
		{[]string{"--trace-window", "30s", "--trace-every", "10s"}, `invalid --trace-every 10s: must be at least --trace-window 30s`},
		{[]string{"--trace-budget", "1Ki"}, `invalid --trace-budget "1Ki": use a quantity of at least 1Mi, like 128Mi or 1Gi`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, stderr := run(t, nil, append([]string{"serve", "--kubeconfig", kc}, tc.args...)...)
			if code != ExitError || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, ExitError, tc.want)
			}
		})
	}
}

func TestServeInClusterOutsideAPod(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	code, _, stderr := run(t, nil, "serve", "--in-cluster")
	if code != ExitError || !strings.Contains(stderr, "--in-cluster: unable to load in-cluster configuration") || !strings.Contains(stderr, "drop --in-cluster to use a kubeconfig") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// TestServeSafeByDefaultListensOnLoopbackOutsideAPod: serve listens on
// 127.0.0.1 unless it runs in a pod or --listen-address says otherwise.
func TestServeSafeByDefaultListensOnLoopbackOutsideAPod(t *testing.T) {
	for _, tc := range []struct{ flag, host, want string }{
		{"", "", "127.0.0.1:8080"},
		{"", "10.96.0.1", ":8080"},
		{"0.0.0.0:9090", "", "0.0.0.0:9090"},
		{"127.0.0.1:9090", "10.96.0.1", "127.0.0.1:9090"},
	} {
		t.Setenv("KUBERNETES_SERVICE_HOST", tc.host)
		if got := listenAddress(tc.flag); got != tc.want {
			t.Errorf("--listen-address %q, KUBERNETES_SERVICE_HOST %q: %q, want %q", tc.flag, tc.host, got, tc.want)
		}
	}
}
