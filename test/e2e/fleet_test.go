package e2e

// diagnose --contexts over two real clusters: one report with a cluster
// each, one exit code.

import (
	"encoding/json"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/watch-doctor/watch-doctor/test/e2e/cluster"
)

// mergedKubeconfig writes one kubeconfig holding a context per cluster,
// named by names, each as the watch-doctor user.
func mergedKubeconfig(t *testing.T, names []string, clusters []*cluster.Cluster) string {
	t.Helper()
	out := clientcmdapi.NewConfig()
	for i, c := range clusters {
		cfg, err := clientcmd.LoadFromFile(c.Kubeconfig(cluster.UserWatchDoctor))
		if err != nil {
			t.Fatal(err)
		}
		cur := cfg.Contexts[cfg.CurrentContext]
		if cur == nil {
			t.Fatalf("%s: no current context", c.Kubeconfig(cluster.UserWatchDoctor))
		}
		name := names[i]
		out.Clusters[name] = cfg.Clusters[cur.Cluster]
		out.AuthInfos[name] = cfg.AuthInfos[cur.AuthInfo]
		out.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	}
	out.CurrentContext = names[0]
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*out, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestPluginFleetTwoClusters(t *testing.T) {
	t.Parallel()
	one := cluster.StartForTest(t, cluster.Options{})
	two := cluster.StartForTest(t, cluster.Options{})
	kc := mergedKubeconfig(t, []string{"one", "two"}, []*cluster.Cluster{one, two})

	res := runPlugin(t, one, cluster.UserWatchDoctor, "diagnose", "--kubeconfig", kc, "--contexts", "one,two", "--samples", "1", "-o", "json")
	if res.ExitCode != 0 {
		t.Fatalf("exit %d (two fresh clusters have no stuck watch)\nstdout:\n%s\nstderr:\n%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	var fr api.FleetReport
	if err := json.Unmarshal([]byte(res.Stdout), &fr); err != nil {
		t.Fatalf("%v\n%s", err, res.Stdout)
	}
	if fr.Kind != "FleetReport" || fr.Summary.Clusters != 2 || fr.Summary.Failed != 0 || len(fr.Clusters) != 2 {
		t.Fatalf("report: %s", res.Stdout)
	}
	for i, want := range []struct{ name, server string }{{"one", one.Server()}, {"two", two.Server()}} {
		c := fr.Clusters[i]
		if c.Context != want.name || c.Server != want.server || c.Error != "" || c.Report == nil {
			t.Errorf("cluster %d: context %q server %q error %q, want %q on %s", i, c.Context, c.Server, c.Error, want.name, want.server)
			continue
		}
		if len(c.Report.APIServers) != 1 || c.Report.Summary.Goroutines == 0 {
			t.Errorf("%s: report read no goroutine dump: %+v", c.Context, c.Report)
		}
	}

	table := runPlugin(t, one, cluster.UserWatchDoctor, "diagnose", "--kubeconfig", kc, "--contexts", "one,two", "--samples", "1")
	if table.ExitCode != 0 {
		t.Fatalf("table: exit %d\n%s", table.ExitCode, table.Stderr)
	}
	t.Logf("table:\n%s", table.Stdout)
	if !strings.HasPrefix(table.Stdout, "CLUSTER ") || !strings.Contains(table.Stdout, "\none ") || !strings.Contains(table.Stdout, "\ntwo ") {
		t.Errorf("table has no row per cluster:\n%s", table.Stdout)
	}
}
