package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/watch-doctor/watch-doctor/test/e2e/cluster"
)

// Environment of the tests on the newer release: its kube-apiserver binary
// and its version, which test/e2e/run.sh builds (hack/build-binaries.sh
// KUBE_VERSION=$E2E_NEWER_KUBE_VERSION, default v1.38.0-beta.0, with the Go
// toolchain its go.mod asks for) and exports. docs/versions.md lists what is
// proven where.
const (
	envNewerAPIServerBin = "KUBE_APISERVER_NEWER_BIN"
	envNewerKubeVersion  = "E2E_NEWER_KUBE_VERSION"
)

// newerRelease returns the newer release the suite runs, failing the test
// (never skipping it) when run.sh did not provide it.
func newerRelease(t *testing.T) release {
	t.Helper()
	bin, version := os.Getenv(envNewerAPIServerBin), os.Getenv(envNewerKubeVersion)
	if bin == "" || version == "" {
		t.Fatalf("$%s and $%s must name the newer kube-apiserver and its release: run test/e2e/run.sh, which builds it", envNewerAPIServerBin, envNewerKubeVersion)
	}
	return release{version: version, bin: bin}
}

// TestNewerReleaseDiagnose runs the seed reproduction on the newer release
// (v1.38.0-beta.0: its cacheWatcher replays the initial events in
// processInitialEvents, called by process, where v1.37 had processInterval)
// with the same etcd, flags and clients as v1.37.2's, and checks that
// `diagnose` with its defaults (two samples 70 s apart), and `collect` then
// `analyze`, give the verdicts they give on v1.37.2: slow-informer stuck
// (by name, or among the candidates), paced-reader never stuck,
// healthy-client not named, exit 1 (checkVerdicts).
func TestNewerReleaseDiagnose(t *testing.T) {
	// Mostly waits (the one-minute block, 70 s between the samples):
	// run beside TestOlderMinorDiagnose.
	t.Parallel()
	rel := newerRelease(t)
	c := cluster.StartForTest(t, cluster.Options{KubeAPIServerBin: rel.bin, Logf: t.Logf})
	r, err := startRepro(t.Logf, c, time.Time{}) // lives for this test only: 400ms
	if err != nil {
		t.Fatalf("start reproduction workload on %s: %v", rel.version, err)
	}
	t.Cleanup(r.stop)
	admin := clientsetFor(t, c, cluster.UserAdmin)
	got, err := admin.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if got.GitVersion != rel.version {
		t.Fatalf("the server says it is %s, want %s ($%s=%s)", got.GitVersion, rel.version, envNewerAPIServerBin, rel.bin)
	}
	if err := waitStuckAMinute(admin.Discovery().RESTClient(), waitDeadline(r.clientsStarted, 6*time.Minute)); err != nil {
		t.Fatalf("%s: slow-informer's watcher never showed a one-minute wait: %v", rel.version, err)
	}
	addr := instanceAddress(t, c)
	t.Run("diagnose", func(t *testing.T) {
		res := runPlugin(t, c, cluster.UserWatchDoctor, "diagnose", "--apiserver", addr, "-o", "json")
		t.Logf("diagnose of %s -o json (exit %d):\n%s\nstderr:\n%s", rel.version, res.ExitCode, res.Stdout, res.Stderr)
		if res.ExitCode != 1 {
			t.Errorf("%s: exit %d, want 1 (a critical finding)", rel.version, res.ExitCode)
		}
		checkVerdicts(t, decode(t, res))
		checkReportVersion(t, res, rel.version)
	})
	t.Run("collect-then-analyze", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "bundle")
		col := runPlugin(t, c, cluster.UserWatchDoctor, "collect", "-d", dir, "--apiserver", addr, "--interval", pluginInterval)
		if col.ExitCode != 0 {
			t.Fatalf("collect exit %d\nstderr:\n%s", col.ExitCode, col.Stderr)
		}
		res := runPlugin(t, c, cluster.UserWatchDoctor, "analyze", dir, "-o", "json")
		t.Logf("analyze of the %s bundle -o json (exit %d):\n%s\nstderr:\n%s", rel.version, res.ExitCode, res.Stdout, res.Stderr)
		if res.ExitCode != 1 {
			t.Errorf("%s: analyze exit %d, want 1 (a critical finding)", rel.version, res.ExitCode)
		}
		checkVerdicts(t, decode(t, res))
		checkReportVersion(t, res, rel.version)
	})
}

// checkReportVersion asserts that the report lists one API server, of
// version.
func checkReportVersion(t *testing.T, res pluginResult, version string) {
	t.Helper()
	var versions struct {
		APIServers []struct {
			Version string `json:"version"`
		} `json:"apiservers"`
	}
	if err := json.Unmarshal([]byte(res.Stdout), &versions); err != nil {
		t.Fatal(err)
	}
	if len(versions.APIServers) != 1 || versions.APIServers[0].Version != version {
		t.Errorf("report's apiservers = %+v, want one of version %s", versions.APIServers, version)
	}
}

// TestDiagnoseAtScaleByTraceNewerRelease is TestDiagnoseAtScaleByTrace on
// the newer release: 10,000 idle watches, the stuck and paced readers and
// the stuck curl, decided from a real execution trace of a server built
// with that release's Go, under 10 ms of stop-the-world.
func TestDiagnoseAtScaleByTraceNewerRelease(t *testing.T) {
	rel := newerRelease(t)
	diagnoseAtScaleByTrace(t, cluster.Options{KubeAPIServerBin: rel.bin})
}
