package e2e

import (
	"os"
	"testing"
	"time"

	"github.com/watch-doctor/watch-doctor/test/e2e/cluster"
)

// Environment of TestOlderMinorDiagnose: the kube-apiserver binary of an
// older minor and its release, which test/e2e/run.sh builds
// (hack/build-binaries.sh KUBE_VERSION=$E2E_OLDER_KUBE_VERSION, default
// v1.36.3) and exports. docs/versions.md lists what is proven where.
const (
	envOlderAPIServerBin = "KUBE_APISERVER_OLDER_BIN"
	envOlderKubeVersion  = "E2E_OLDER_KUBE_VERSION"
)

// TestOlderMinorDiagnose runs the seed reproduction on a real kube-apiserver
// of an older minor, with the same etcd, flags and clients as v1.37.2's,
// and checks that `diagnose` gives the verdicts it gives on v1.37.2:
// slow-informer stuck, paced-reader never stuck, healthy-client not named.
func TestOlderMinorDiagnose(t *testing.T) {
	// Mostly a wait for the one-minute block and the samples, which
	// overlaps TestNewerReleaseDiagnose's (both parallel, after the
	// sequential tests).
	t.Parallel()
	bin, version := os.Getenv(envOlderAPIServerBin), os.Getenv(envOlderKubeVersion)
	if bin == "" || version == "" {
		t.Fatalf("$%s and $%s must name an older kube-apiserver and its release: run test/e2e/run.sh, which builds it", envOlderAPIServerBin, envOlderKubeVersion)
	}
	c := cluster.StartForTest(t, cluster.Options{KubeAPIServerBin: bin, Logf: t.Logf})
	r, err := startRepro(t.Logf, c, time.Time{}) // lives for this test only: 400ms
	if err != nil {
		t.Fatalf("start reproduction workload on %s: %v", version, err)
	}
	t.Cleanup(r.stop)
	admin := clientsetFor(t, c, cluster.UserAdmin)
	got, err := admin.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if got.GitVersion != version {
		t.Fatalf("the server says it is %s, want %s ($%s=%s)", got.GitVersion, version, envOlderAPIServerBin, bin)
	}
	if err := waitStuckAMinute(admin.Discovery().RESTClient(), waitDeadline(r.clientsStarted, 6*time.Minute)); err != nil {
		t.Fatalf("%s: slow-informer's watcher never showed a one-minute wait: %v", version, err)
	}
	res := runPlugin(t, c, cluster.UserWatchDoctor, "diagnose", "--apiserver", instanceAddress(t, c), "--interval", pluginInterval, "-o", "json")
	if res.ExitCode != 1 {
		t.Fatalf("%s: exit %d, want 1 (a critical finding)\nstderr:\n%s", version, res.ExitCode, res.Stderr)
	}
	rep := decode(t, res)
	checkVerdicts(t, rep)
	if len(rep.APIServers) != 1 || rep.APIServers[0].Version != version {
		t.Errorf("report's apiservers = %+v, want one of version %s", rep.APIServers, version)
	}
	t.Logf("diagnose of %s -o json:\n%s", version, res.Stdout)
}
