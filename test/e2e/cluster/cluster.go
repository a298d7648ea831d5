// Package cluster runs a real etcd and kube-apiserver on loopback for the
// end-to-end tests: free ports picked at run time, a static token file with
// the users the tests need, RBAC, profiling on, and one kubeconfig per user.
//
// The binaries come from test/e2e/hack/build-binaries.sh; BinariesFromEnv
// reads their paths from KUBE_APISERVER_BIN and ETCD_BIN, which
// test/e2e/run.sh exports.
//
// A test that owns its cluster calls StartForTest. A package whose tests share
// one cluster (it takes ~15 s to start) calls Start from TestMain, or from a
// sync.Once, and Stop when m.Run returns.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Environment variables naming the binaries.
const (
	EnvKubeAPIServerBin = "KUBE_APISERVER_BIN"
	EnvEtcdBin          = "ETCD_BIN"
)

// Options configures Start. Zero values take the defaults noted on each field.
type Options struct {
	// Dir holds everything the cluster writes: etcd data, certificates,
	// the token file, logs and kubeconfigs. Required.
	Dir string
	// KubeAPIServerBin and EtcdBin are the binaries to run. Default: the
	// paths in $KUBE_APISERVER_BIN and $ETCD_BIN (see BinariesFromEnv).
	KubeAPIServerBin string
	EtcdBin          string
	// ExtraAPIServerArgs are appended to kube-apiserver's command line;
	// a repeated flag overrides the harness's value.
	ExtraAPIServerArgs []string
	// APIServerEnv is added to kube-apiserver's environment (KEY=value),
	// e.g. the patched binary's WATCH_DOCTOR_STALL_FIX.
	APIServerEnv []string
	// StartTimeout bounds the wait for etcd and kube-apiserver to become
	// ready, and for the RBAC rules to take effect. Default 3 minutes.
	StartTimeout time.Duration
	// Logf receives progress messages. Default: discard.
	Logf func(format string, args ...any)
}

// Cluster is a running etcd and kube-apiserver.
//
// Thread safety: a Cluster does not change after Start returns; its methods
// may be called from any goroutine. Stop is idempotent.
type Cluster struct {
	dir    string
	server string // https://127.0.0.1:PORT
	caFile string
	users  map[string]user

	etcd      *process
	apiserver *process // a single-instance cluster's (Start)

	// An HA cluster's (StartHA): its serving certificates, instances and
	// load balancer; c.server is the balancer's URL.
	certs     *servingCerts
	instances []*Instance
	lb        *TCPBalancer
}

// BinariesFromEnv returns the kube-apiserver and etcd paths from
// $KUBE_APISERVER_BIN and $ETCD_BIN, and fails with instructions when either
// is unset or not an executable file.
func BinariesFromEnv() (apiserver, etcd string, err error) {
	var errs []error
	check := func(env string) string {
		p := os.Getenv(env)
		if p == "" {
			errs = append(errs, fmt.Errorf("$%s is not set", env))
			return ""
		}
		fi, err := os.Stat(p)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("$%s=%q: %w", env, p, err))
		case fi.IsDir() || fi.Mode()&0o111 == 0:
			errs = append(errs, fmt.Errorf("$%s=%q is not an executable file", env, p))
		}
		return p
	}
	apiserver = check(EnvKubeAPIServerBin)
	etcd = check(EnvEtcdBin)
	if len(errs) > 0 {
		return "", "", fmt.Errorf("%w\nthe e2e tests need kube-apiserver and etcd binaries: run test/e2e/run.sh (or `make e2e`), "+
			"or run `eval \"$(test/e2e/hack/build-binaries.sh)\"; export %s %s` before go test",
			errors.Join(errs...), EnvKubeAPIServerBin, EnvEtcdBin)
	}
	return apiserver, etcd, nil
}

// StartForTest starts a cluster owned by one test: its files go to
// t.TempDir() and Stop runs on t.Cleanup. It fails the test if the cluster
// does not start.
func StartForTest(t testing.TB, opts Options) *Cluster {
	t.Helper()
	return startForTest(t, opts, Start)
}

// startForTest runs start with the test's defaults (files in t.TempDir(),
// logs on t) and stops the cluster on t.Cleanup.
func startForTest(t testing.TB, opts Options, start func(context.Context, Options) (*Cluster, error)) *Cluster {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	if opts.Logf == nil {
		opts.Logf = t.Logf
	}
	c, err := start(context.Background(), opts)
	if err != nil {
		t.Fatalf("start cluster: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("stop cluster: %v", err)
		}
	})
	return c
}

// Start starts etcd and kube-apiserver, waits until /readyz answers ok,
// applies the harness's RBAC rules and waits until the authorizer enforces
// them. On error everything started is stopped again and the error carries the
// tail of the failing process's log.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	return start(ctx, opts, (*Cluster).start)
}

// start fills in opts' defaults, bounds ctx by StartTimeout and runs how; on
// error it stops whatever how started.
func start(ctx context.Context, opts Options, how func(*Cluster, context.Context, Options) error) (*Cluster, error) {
	if opts.Dir == "" {
		return nil, errors.New("cluster.Options.Dir is required")
	}
	if opts.KubeAPIServerBin == "" || opts.EtcdBin == "" {
		a, e, err := BinariesFromEnv()
		if err != nil {
			return nil, err
		}
		if opts.KubeAPIServerBin == "" {
			opts.KubeAPIServerBin = a
		}
		if opts.EtcdBin == "" {
			opts.EtcdBin = e
		}
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 3 * time.Minute
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()

	users, err := newUsers()
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: opts.Dir, users: users}
	if err := how(c, ctx, opts); err != nil {
		return nil, errors.Join(err, c.Stop())
	}
	return c, nil
}

func (c *Cluster) start(ctx context.Context, opts Options) error {
	for _, d := range []string{"etcd", "certs", "logs"} {
		if err := os.MkdirAll(filepath.Join(c.dir, d), 0o700); err != nil {
			return err
		}
	}
	began := time.Now()
	etcdURL, err := c.startEtcd(ctx, opts)
	if err != nil {
		return err
	}
	opts.Logf("etcd ready at %s after %v", etcdURL, time.Since(began).Round(time.Millisecond))

	if err := c.startAPIServer(ctx, opts, etcdURL); err != nil {
		return err
	}
	opts.Logf("kube-apiserver ready at %s after %v", c.server, time.Since(began).Round(time.Millisecond))

	if err := c.setUpRBAC(ctx, opts); err != nil {
		return err
	}
	opts.Logf("cluster ready (RBAC in effect) after %v; files in %s", time.Since(began).Round(time.Millisecond), c.dir)
	return nil
}

// setUpRBAC creates the harness's RBAC objects and waits until the
// authorizer enforces them.
func (c *Cluster) setUpRBAC(ctx context.Context, opts Options) error {
	admin, err := c.Clientset(UserAdmin)
	if err != nil {
		return err
	}
	if err := applyRBAC(ctx, admin); err != nil {
		return err
	}
	var lastErr error
	err = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		ok, err := rbacInEffect(ctx, admin)
		lastErr = err
		return ok, nil
	})
	if err != nil {
		return fmt.Errorf("RBAC rules not in effect after %v (last error: %v): %w", opts.StartTimeout, lastErr, err)
	}
	return nil
}

// freePorts returns n distinct free TCP ports on 127.0.0.1.
func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("pick a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// Stop stops kube-apiserver, then etcd (SIGTERM to each process group, SIGKILL
// after a grace period) and reaps them. Files stay in Dir. Safe to call twice.
func (c *Cluster) Stop() error {
	var errs []error
	if c.lb != nil {
		errs = append(errs, c.lb.Close())
	}
	for _, in := range c.instances {
		if p := in.process(); p != nil {
			errs = append(errs, p.stop(15*time.Second))
		}
	}
	if c.apiserver != nil {
		errs = append(errs, c.apiserver.stop(15*time.Second))
	}
	if c.etcd != nil {
		errs = append(errs, c.etcd.stop(10*time.Second))
	}
	return errors.Join(errs...)
}

// Dir is the directory holding the cluster's files.
func (c *Cluster) Dir() string { return c.dir }

// Server is the kubeconfigs' server URL: https://127.0.0.1:PORT, or the load
// balancer's https://198.51.100.10:PORT for an HA cluster.
func (c *Cluster) Server() string { return c.server }

// CAFile is the PEM file of the CA that signed the API server's certificate.
func (c *Cluster) CAFile() string { return c.caFile }

// Kubeconfig returns the path of user's kubeconfig file. It panics for a user
// not in Users().
func (c *Cluster) Kubeconfig(userName string) string {
	if _, ok := c.users[userName]; !ok {
		panic(fmt.Sprintf("cluster: unknown user %q (known: %s)", userName, strings.Join(Users(), ", ")))
	}
	return kubeconfigPath(c.dir, userName)
}

// Token returns user's bearer token.
func (c *Cluster) Token(userName string) string { return c.users[userName].token }

// RESTConfig loads a fresh rest.Config from user's kubeconfig; callers may
// change it freely.
func (c *Cluster) RESTConfig(userName string) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig(userName))
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig for %q: %w", userName, err)
	}
	return cfg, nil
}

// Clientset returns a clientset for user.
func (c *Cluster) Clientset(userName string) (*kubernetes.Clientset, error) {
	cfg, err := c.RESTConfig(userName)
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// LoaderClientset returns the admin's clientset with a client-side limit of
// qps (and as much burst): client-go's default 5 QPS would take minutes to
// create a workload of thousands of objects; the callers' workers are the
// politeness.
func (c *Cluster) LoaderClientset(qps int) (*kubernetes.Clientset, error) {
	cfg, err := c.RESTConfig(UserAdmin)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = float32(qps), qps
	return kubernetes.NewForConfig(cfg)
}

// LogFiles returns the paths of the etcd and kube-apiserver logs.
func (c *Cluster) LogFiles() (etcd, apiserver string) {
	return filepath.Join(c.dir, "logs", "etcd.log"), filepath.Join(c.dir, "logs", "kube-apiserver.log")
}

// MemoryUsage describes the resident memory (current and peak) of etcd and
// kube-apiserver, for test logs.
func (c *Cluster) MemoryUsage() string {
	var parts []string
	ps := []*process{c.etcd, c.apiserver}
	for _, in := range c.instances {
		ps = append(ps, in.process())
	}
	for _, p := range ps {
		if p == nil {
			continue
		}
		rss, peak, err := memoryUsage(p.cmd.Process.Pid)
		if err != nil {
			parts = append(parts, fmt.Sprintf("%s: %v", p.name, err))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s RSS %s (peak %s)", p.name, rss, peak))
	}
	return strings.Join(parts, "; ")
}
