package cli

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// TestFailedMetricsDoesNotAdviseForce: a failed /metrics does not advise --force, a stop-the-world
// dump against a server that may be down.
func TestFailedMetricsDoesNotAdviseForce(t *testing.T) {
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	s.FailMetrics = true
	kc := fakeapiserver.Kubeconfig(t, s, fakeapiserver.TokenAdmin)
	code, _, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--apiserver", s.Address(), "--samples", "1")
	// The pause is estimated from the debug=1 profile, not from
	// go_goroutines, so the dump is still taken within --max-pause and the
	// stuck watch found.
	if code != ExitFindings {
		t.Errorf("exit %d, want %d", code, ExitFindings)
	}
	if strings.Contains(errOut, "--force") {
		t.Errorf("stderr advises --force after /metrics failed:\n%s", errOut)
	}
	if !strings.Contains(errOut, "GET /metrics: HTTP 500") {
		t.Errorf("stderr does not report the failed /metrics:\n%s", errOut)
	}
}

// TestEverything404IsNotAnAPIServer: a web server that answers 404 to everything is not "an API
// server with APF disabled".
func TestEverything404IsNotAnAPIServer(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	kc := writeKubeconfig(t, map[string]string{"web": srv.URL})
	code, _, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--samples", "1", "--insecure-skip-tls-verify")
	if code != ExitError {
		t.Errorf("exit %d, want %d", code, ExitError)
	}
	for _, wrong := range []string{"API Priority and Fairness is disabled", "profiling is disabled"} {
		if strings.Contains(errOut, wrong) {
			t.Errorf("stderr claims %q of a server that 404s everything:\n%s", wrong, errOut)
		}
	}
	if !strings.Contains(errOut, "not a Kubernetes API server") {
		t.Errorf("stderr does not say it is not an API server:\n%s", errOut)
	}
}

// TestNoKubeconfigSaysWhatItUses: with no kubeconfig at all, say that localhost:8080 is used, as
// kubectl does.
func TestNoKubeconfigSaysWhatItUses(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	_, _, errOut := runLive(t, "diagnose", "--samples", "1", "--request-timeout", "1s", "--apiserver", "127.0.0.1:1")
	if !strings.Contains(errOut, "no kubeconfig") || !strings.Contains(errOut, "localhost:8080") {
		t.Errorf("stderr does not say that no kubeconfig was found and localhost:8080 is used:\n%s", errOut)
	}
}

// TestFallbackNoteOnStderr: the EndpointSlices fallback note reaches stderr.
func TestFallbackNoteOnStderr(t *testing.T) {
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	kc := fakeapiserver.Kubeconfig(t, s, fakeapiserver.TokenNoDebug)
	_, _, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--samples", "1", "-o", "json")
	if !strings.Contains(errOut, "cannot list the API server instances") {
		t.Errorf("the fallback note is not on stderr:\n%s", errOut)
	}
}

// TestFlagValueErrorsNameTheFlag: flag values are blamed on the flag, in words that fit.
func TestFlagValueErrorsNameTheFlag(t *testing.T) {
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	kc := fakeapiserver.Kubeconfig(t, s, fakeapiserver.TokenAdmin)
	tests := []struct {
		args    []string
		want    string
		notWant string
	}{
		{[]string{"diagnose", "--kubeconfig", kc, "--request-timeout", "banana"}, `invalid --request-timeout "banana"`, "kubeconfig"},
		{[]string{"metrics", "--kubeconfig", kc, "--request-timeout", "banana"}, `invalid --request-timeout "banana"`, "kubeconfig"},
		{[]string{"diagnose", "--kubeconfig", kc, "--apiserver", "10.0.0.1:99999"}, `port "99999" is out of range`, "not a number"},
	}
	for _, tc := range tests {
		code, _, errOut := runLive(t, tc.args...)
		if code != ExitError || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, tc.notWant) {
			t.Errorf("%q: exit %d, stderr %q; want %q without %q", tc.args, code, errOut, tc.want, tc.notWant)
		}
	}
}
