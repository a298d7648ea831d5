// Command capture records the seed reproduction on a real kube-apiserver as
// testdata: two samples, t1 and t2, in the layout of
// testdata/kube-apiserver-v1.37.2/seed-repro (goroutine-debug2.txt,
// goroutine-debug1.txt, goroutine.pb.gz, apf-requests.txt,
// apf-priority-levels.txt, metrics.txt, version.json, captured-at.txt).
//
// It starts etcd and the kube-apiserver of $KUBE_APISERVER_BIN with the e2e
// harness (test/e2e/cluster), creates the seed workload's pods, starts its
// three clients (test/e2e/workload StartSeed: slow-informer, paced-reader,
// healthy-client) and fetches each sample at its time after the clients
// started. It runs only inside a network namespace whose one interface is
// lo (test/e2e/hack/capture.sh makes one), as the e2e tests do.
//
//	test/e2e/hack/capture.sh v1.36.3 testdata/kube-apiserver-v1.36.3/seed-repro
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"

	"github.com/watch-doctor/watch-doctor/test/e2e/cluster"
	"github.com/watch-doctor/watch-doctor/test/e2e/probe"
	"github.com/watch-doctor/watch-doctor/test/e2e/workload"
)

func main() {
	out := flag.String("out", "", "directory to write t1/ and t2/ into (must not exist)")
	t1 := flag.Duration("t1", 70*time.Second, "time of the first sample after the clients started")
	t2 := flag.Duration("t2", 150*time.Second, "time of the second sample after the clients started")
	pods := flag.Int("pods", workload.DefaultPodsOptions().Count, "pods of 20 KB in namespace rand2")
	interval := flag.Duration("paced-interval", 400*time.Millisecond, "the paced reader's pause between two events")
	flag.Parse()
	if err := run(*out, *t1, *t2, *pods, *interval); err != nil {
		fmt.Fprintf(os.Stderr, "capture: %v\n", err)
		os.Exit(1)
	}
}

func run(out string, t1, t2 time.Duration, pods int, interval time.Duration) error {
	switch {
	case out == "":
		return fmt.Errorf("-out is required")
	case t1 <= 0 || t2 <= t1:
		return fmt.Errorf("want 0 < -t1 < -t2, got %v and %v", t1, t2)
	}
	if err := cluster.CheckIsolatedNetwork(); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	if err := os.Mkdir(out, 0o755); err != nil {
		return fmt.Errorf("-out: %w", err)
	}
	dir, err := os.MkdirTemp("", "watch-doctor-capture-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	logf := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "capture: "+format+"\n", args...)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := cluster.Start(ctx, cluster.Options{Dir: dir, Logf: logf})
	if err != nil {
		return err
	}
	defer c.Stop()
	seed, err := startSeed(ctx, c, pods, interval, logf)
	if err != nil {
		return err
	}
	defer seed.Stop()
	admin, err := c.Clientset(cluster.UserAdmin)
	if err != nil {
		return err
	}
	rc := admin.Discovery().RESTClient()
	for _, s := range []struct {
		name string
		at   time.Duration
	}{{"t1", t1}, {"t2", t2}} {
		// The samples are taken at set times of the workload's life,
		// as the v1.37.2 ones were: a schedule, not a synchronisation.
		time.Sleep(time.Until(seed.ClientsStarted.Add(s.at)))
		if err := cluster.CaptureBundle(ctx, rc, filepath.Join(out, s.name)); err != nil {
			return fmt.Errorf("sample %s: %w", s.name, err)
		}
		logf("sample %s written %v after the clients started (slow-informer %d events, paced-reader %d, healthy-client %d)",
			s.name, time.Since(seed.ClientsStarted).Round(time.Second), seed.SlowInformer.Events(), seed.PacedReader.Events(), seed.HealthyClient.Events())
	}
	for _, w := range []*workload.Watcher{seed.SlowInformer, seed.PacedReader, seed.HealthyClient} {
		if err := w.Err(); err != nil {
			return fmt.Errorf("%s ended before the last sample: %w", w.Name(), err)
		}
	}
	return nil
}

// startSeed creates the pods and starts the three clients, the slow
// informer first and alone until its watcher blocks.
func startSeed(ctx context.Context, c *cluster.Cluster, pods int, interval time.Duration, logf func(string, ...any)) (*workload.Seed, error) {
	opts := workload.DefaultPodsOptions()
	opts.Count = pods
	loader, err := c.LoaderClientset(500)
	if err != nil {
		return nil, err
	}
	began := time.Now()
	if err := workload.CreatePods(ctx, loader, opts); err != nil {
		return nil, err
	}
	logf("created %d pods of %d B in %q in %v", opts.Count, opts.AnnotationBytes, opts.Namespace, time.Since(began).Round(time.Millisecond))
	var cfgs workload.SeedConfigs
	for _, u := range []struct {
		name string
		dst  **rest.Config
	}{{cluster.UserSlowInformer, &cfgs.SlowInformer}, {cluster.UserPacedReader, &cfgs.PacedReader}, {cluster.UserHealthyClient, &cfgs.HealthyClient}} {
		if *u.dst, err = c.RESTConfig(u.name); err != nil {
			return nil, err
		}
	}
	admin := loader.Discovery().RESTClient()
	return workload.StartSeed(ctx, cfgs, opts.Namespace, interval, func(ctx context.Context) error {
		return probe.WaitInitialEventsSenders(ctx, admin, 1, time.Minute)
	})
}
