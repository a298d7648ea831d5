// Command capture-trace captures the execution-trace fixture of a real
// kube-apiserver running the seed reproduction (kubernetes issue 131721):
// testdata/kube-apiserver-v1.37.2/trace-seed, and with $KUBE_APISERVER_BIN
// another release's (testdata/kube-apiserver-v1.38.0-beta.0/trace-seed).
//
// It runs only inside the network namespace of test/e2e/hack/capture-trace.sh
// (cluster.CheckIsolatedNetwork), starts etcd and kube-apiserver on
// loopback with the e2e harness (test/e2e/cluster), creates the seed pods
// and starts the seed clients (test/e2e/workload: slow-informer, which reads
// one event and stops; paced-reader, one event per -paced; healthy-client),
// waits -settle, then, as the diagnosing user, writes in the bundle layout
// of internal/bundle/write.go:
//
//	OUT/<instance>/sample-1/   sample A: APF dump_requests, /metrics, the
//	                           debug=1 profile, /version, captured-at.txt
//	OUT/<instance>/trace.out   /debug/pprof/trace?seconds=-seconds
//	OUT/<instance>/sample-2/   sample B, as sample A, right after the trace
//
// With -debug2 DIR it also writes a debug=2 dump just before sample A and
// just after sample B to DIR/sample-1 and DIR/sample-2 (outside the traced
// window), so that the dump route can be compared with the trace route on
// the same server.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/rest"

	"github.com/watch-doctor/watch-doctor/test/e2e/cluster"
	"github.com/watch-doctor/watch-doctor/test/e2e/probe"
	"github.com/watch-doctor/watch-doctor/test/e2e/workload"
)

// maxBody bounds every response read; maxTrace the trace's (a few MB on
// the seed server: -seconds is kept short).
const (
	maxBody  = 64 << 20
	maxTrace = 16 << 20
)

type config struct {
	out, debug2       string
	seconds           int
	settle, paced     time.Duration
	pods              int
	instance          string
	traceLimit, limit int64
}

func main() {
	var c config
	flag.StringVar(&c.out, "out", "", "bundle directory to create (must not exist)")
	flag.StringVar(&c.debug2, "debug2", "", "also write debug=2 dumps before sample A and after sample B to this directory (must not exist)")
	flag.IntVar(&c.seconds, "seconds", 15, "length of the execution trace")
	flag.DurationVar(&c.settle, "settle", 40*time.Second, "wait after the clients started, before sample A")
	flag.DurationVar(&c.paced, "paced", 400*time.Millisecond, "paced-reader's interval between two reads")
	flag.IntVar(&c.pods, "pods", workload.DefaultPodsOptions().Count, "pods of 20 KB to create")
	flag.StringVar(&c.instance, "instance", "127.0.0.1", "instance directory name in the bundle")
	flag.Parse()
	c.traceLimit, c.limit = maxTrace, maxBody
	if err := run(c); err != nil {
		fmt.Fprintf(os.Stderr, "capture-trace: %v\n", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, time.Now().UTC().Format("15:04:05.000 ")+"capture-trace: "+format+"\n", args...)
}

func run(c config) error {
	if c.out == "" {
		return errors.New("-out is required")
	}
	if err := cluster.CheckIsolatedNetwork(); err != nil {
		return err
	}
	for _, d := range []string{c.out, c.debug2} {
		if d == "" {
			continue
		}
		if err := os.Mkdir(d, 0o700); err != nil {
			return fmt.Errorf("claiming %s: %w", d, err)
		}
	}
	dir, err := os.MkdirTemp("", "watch-doctor-capture-trace-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cl, err := cluster.Start(ctx, cluster.Options{Dir: dir, Logf: logf})
	if err != nil {
		return err
	}
	defer cl.Stop()
	stop, err := startSeed(ctx, cl, c)
	if err != nil {
		return err
	}
	defer stop()
	logf("clients started; waiting %v", c.settle)
	time.Sleep(c.settle)
	return capture(ctx, cl, c)
}

// startSeed creates the pods and starts the three seed clients, as the
// e2e suite's startRepro does: slow-informer first, and the next ones only
// once its watcher blocked sending initial events.
func startSeed(ctx context.Context, cl *cluster.Cluster, c config) (func(), error) {
	loader, err := cl.LoaderClientset(500)
	if err != nil {
		return nil, err
	}
	pods := workload.DefaultPodsOptions()
	pods.Count = c.pods
	if err := workload.CreatePods(ctx, loader, pods); err != nil {
		return nil, err
	}
	logf("created %d pods of %d B in %q", pods.Count, pods.AnnotationBytes, pods.Namespace)
	var started []*workload.Watcher
	stop := func() { workload.StopAll(started...) }
	starts := []struct {
		user  string
		start func(*rest.Config) (*workload.Watcher, error)
	}{
		{cluster.UserSlowInformer, func(cfg *rest.Config) (*workload.Watcher, error) {
			return workload.StartSlowInformer(ctx, cfg, pods.Namespace)
		}},
		{cluster.UserPacedReader, func(cfg *rest.Config) (*workload.Watcher, error) {
			return workload.StartPacedReader(ctx, cfg, pods.Namespace, c.paced)
		}},
		{cluster.UserHealthyClient, func(cfg *rest.Config) (*workload.Watcher, error) {
			return workload.StartHealthyClient(ctx, cfg, pods.Namespace)
		}},
	}
	for _, s := range starts {
		cfg, err := cl.RESTConfig(s.user)
		if err != nil {
			stop()
			return nil, err
		}
		w, err := s.start(cfg)
		if err != nil {
			stop()
			return nil, err
		}
		started = append(started, w)
		if s.user == cluster.UserSlowInformer {
			if err := probe.WaitInitialEventsSenders(ctx, loader.Discovery().RESTClient(), 1, time.Minute); err != nil {
				stop()
				return nil, err
			}
		}
	}
	return stop, nil
}

// sampleFiles are the fetches of one sample, with the file names of
// internal/bundle.FileName.
var sampleFiles = []struct{ name, path string }{
	{"apf-requests.txt", "/debug/api_priority_and_fairness/dump_requests?includeRequestDetails=1"},
	{"metrics.txt", "/metrics"},
	{"goroutine-debug1.txt", "/debug/pprof/goroutine?debug=1"},
	{"version.json", "/version"},
}

func capture(ctx context.Context, cl *cluster.Cluster, c config) error {
	cfg, err := cl.RESTConfig(cluster.UserWatchDoctor)
	if err != nil {
		return err
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	f := fetcher{c: hc, host: cfg.Host, limit: c.limit}
	inst := filepath.Join(c.out, c.instance)
	if c.debug2 != "" {
		if err := f.save(ctx, filepath.Join(c.debug2, "sample-1", "goroutine-debug2.txt"), "/debug/pprof/goroutine?debug=2"); err != nil {
			return err
		}
	}
	if err := f.sample(ctx, filepath.Join(inst, "sample-1")); err != nil {
		return err
	}
	began := time.Now()
	tf := fetcher{c: hc, host: cfg.Host, limit: c.traceLimit}
	if err := tf.save(ctx, filepath.Join(inst, "trace.out"), fmt.Sprintf("/debug/pprof/trace?seconds=%d", c.seconds)); err != nil {
		return err
	}
	st, err := os.Stat(filepath.Join(inst, "trace.out"))
	if err != nil {
		return err
	}
	logf("trace: %d bytes in %v (%.0f B/s)", st.Size(), time.Since(began).Round(time.Millisecond), float64(st.Size())/time.Since(began).Seconds())
	if err := f.sample(ctx, filepath.Join(inst, "sample-2")); err != nil {
		return err
	}
	if c.debug2 != "" {
		return f.save(ctx, filepath.Join(c.debug2, "sample-2", "goroutine-debug2.txt"), "/debug/pprof/goroutine?debug=2")
	}
	return nil
}

// fetcher reads bounded responses from one API server, following no
// redirect.
type fetcher struct {
	c     *http.Client
	host  string
	limit int64
}

// sample writes one sample: captured-at.txt (taken just before the first
// fetch, as collect records it) and sampleFiles.
func (f fetcher) sample(ctx context.Context, dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	at := time.Now().UTC().Format(time.RFC3339Nano) + "\n"
	if err := os.WriteFile(filepath.Join(dir, "captured-at.txt"), []byte(at), 0o600); err != nil {
		return err
	}
	for _, sf := range sampleFiles {
		if err := f.save(ctx, filepath.Join(dir, sf.name), sf.path); err != nil {
			return err
		}
	}
	logf("sample %s written", dir)
	return nil
}

// save streams GET path into the new file name, refusing a body longer
// than f.limit.
func (f fetcher) save(ctx context.Context, name, path string) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		return err
	}
	u, err := url.JoinPath(f.host, strings.SplitN(path, "?", 2)[0])
	if err != nil {
		return err
	}
	if q := strings.SplitN(path, "?", 2); len(q) == 2 {
		u += "?" + q[1]
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := f.c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("GET %s: HTTP %d: %q", path, resp.StatusCode, b)
	}
	out, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	n, err := io.Copy(out, io.LimitReader(resp.Body, f.limit+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > f.limit {
		err = fmt.Errorf("GET %s: body exceeds %d bytes", path, f.limit)
	}
	if err != nil {
		os.Remove(name)
		return fmt.Errorf("GET %s: %w", path, err)
	}
	return nil
}
