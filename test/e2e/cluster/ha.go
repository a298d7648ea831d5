package cluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
)

// HAOptions configures StartHA; its fields mean what Options' do
// (ExtraAPIServerArgs go to every instance).
type HAOptions Options

// Instance is one kube-apiserver of an HA cluster, bound to and advertising
// an address of its own on the namespace's lo.
//
// Thread safety: methods may be called from any goroutine.
type Instance struct {
	// Name is apiserver-1, apiserver-2, ... in the order of
	// InstanceAddresses.
	Name string
	// IP is the instance's address on lo; Address is IP:port, what the
	// default/kubernetes EndpointSlices list for it.
	IP, Address string
	// Hostname is the hostname of the instance's UTS namespace (its
	// Name): the kubernetes.io/hostname label of the identity Lease it
	// holds, one Lease per instance.
	Hostname string

	bin     string
	args    []string
	env     []string
	logPath string

	mu   sync.Mutex
	proc *process
}

func (in *Instance) process() *process {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.proc
}

// PID is the process id of the instance's current process.
func (in *Instance) PID() int { return in.process().cmd.Process.Pid }

// StartTime is the current process's start, in seconds since the epoch,
// computed as its process_start_time_seconds metric is.
func (in *Instance) StartTime() (float64, error) { return processStartTime(in.PID()) }

// LogFile is the path of the instance's log (every process it ran).
func (in *Instance) LogFile() string { return in.logPath }

// StartHAForTest starts an HA cluster owned by one test, as StartForTest
// does a single-instance one.
func StartHAForTest(t testing.TB, opts HAOptions) *Cluster {
	t.Helper()
	return startForTest(t, Options(opts), func(ctx context.Context, o Options) (*Cluster, error) { return StartHA(ctx, HAOptions(o)) })
}

// StartHA starts a highly-available control plane: one etcd on 127.0.0.1,
// three kube-apiservers sharing it, each bound to and advertising its own
// address of InstanceAddresses on one port, each in a UTS namespace of its
// own named after it (so each holds an identity Lease of its own), each
// with an authentication configuration file (so its /metrics carry the
// apiserver_id_hash of its lease), with the default lease endpoint
// reconciler (so the default/kubernetes EndpointSlices list all three, as in
// a real cluster), and a TCPBalancer on LBAddress in front of them. The
// kubeconfigs (Kubeconfig, RESTConfig, Clientset) point at the balancer;
// InstanceRESTConfig at one instance.
//
// It must run inside the suite's network namespace (CheckIsolatedNetwork),
// where test/e2e/run.sh put those addresses on lo; nothing can leave it.
// The instances start one after the other, so their process start times
// differ. StartHA returns once every instance is ready, the RBAC rules are
// in effect and the EndpointSlices list every instance.
func StartHA(ctx context.Context, opts HAOptions) (*Cluster, error) {
	return start(ctx, Options(opts), (*Cluster).startHA)
}

func (c *Cluster) startHA(ctx context.Context, opts Options) error {
	began := time.Now()
	if err := checkOnLoopback(append([]string{LBAddress}, InstanceAddresses()...)...); err != nil {
		return err
	}
	for _, d := range []string{"etcd", "certs", "logs"} {
		if err := os.MkdirAll(filepath.Join(c.dir, d), 0o700); err != nil {
			return err
		}
	}
	etcdURL, err := c.startEtcd(ctx, opts)
	if err != nil {
		return err
	}
	ips := []net.IP{net.ParseIP(LBAddress), net.ParseIP("127.0.0.1"), net.ParseIP(kubernetesSvcIP)}
	for _, a := range InstanceAddresses() {
		ips = append(ips, net.ParseIP(a))
	}
	certDir := filepath.Join(c.dir, "certs")
	if c.certs, err = writeServingCerts(certDir, ips, []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}); err != nil {
		return err
	}
	common, err := c.commonAPIServerArgs(etcdURL)
	if err != nil {
		return err
	}
	authn := filepath.Join(c.dir, "authentication-config.yaml")
	if err := os.WriteFile(authn, []byte(authenticationConfig), 0o600); err != nil {
		return err
	}
	port, err := commonFreePort(InstanceAddresses())
	if err != nil {
		return err
	}
	var backends []string
	for i, ip := range InstanceAddresses() {
		in := &Instance{
			Name: "apiserver-" + strconv.Itoa(i+1), IP: ip, Address: net.JoinHostPort(ip, port), Hostname: "apiserver-" + strconv.Itoa(i+1),
			bin: opts.KubeAPIServerBin, env: opts.APIServerEnv, logPath: filepath.Join(c.dir, "logs", fmt.Sprintf("kube-apiserver-%d.log", i+1)),
		}
		in.args = append([]string{
			"--advertise-address=" + ip,
			"--bind-address=" + ip,
			"--secure-port=" + port,
			"--tls-cert-file=" + c.certs.certFile,
			"--tls-private-key-file=" + c.certs.keyFile,
			// The default, spelled out: every instance keeps a lease and
			// the reconciler lists the live ones in default/kubernetes.
			"--endpoint-reconciler-type=lease",
			"--authentication-config=" + authn,
		}, common...)
		in.args = append(in.args, opts.ExtraAPIServerArgs...)
		c.instances = append(c.instances, in)
		backends = append(backends, in.Address)
	}
	if c.lb, err = startTCPBalancer(net.JoinHostPort(LBAddress, "0"), backends); err != nil {
		return fmt.Errorf("start the load balancer: %w", err)
	}
	c.server = "https://" + c.lb.Address()
	if err := c.writeKubeconfigs(c.certs.caPEM); err != nil {
		return err
	}
	for _, in := range c.instances {
		if err := c.startInstance(ctx, in); err != nil {
			return err
		}
		opts.Logf("%s ready at %s after %v", in.Name, in.Address, time.Since(began).Round(time.Millisecond))
	}
	if err := c.setUpRBAC(ctx, opts); err != nil {
		return err
	}
	if err := c.waitEndpoints(ctx); err != nil {
		return err
	}
	opts.Logf("HA cluster ready (3 instances in default/kubernetes, load balancer %s) after %v; files in %s", c.lb.Address(), time.Since(began).Round(time.Millisecond), c.dir)
	return nil
}

// authenticationConfig is an AuthenticationConfiguration with no JWT
// authenticator (allowed: k8s.io/apiserver pkg/apis/apiserver/validation/
// validation.go:51-53 in v0.37.2); the token file still authenticates the
// users. kube-apiserver then exports
// apiserver_authentication_config_controller_last_config_info with the
// apiserver_id_hash of its identity lease from the start
// (k8s.io/kubernetes pkg/kubeapiserver/options/authentication.go:754-756
// in v1.37.2), which lets the plugin name the lease of a process it
// reached through the load balancer.
const authenticationConfig = `apiVersion: apiserver.config.k8s.io/v1
kind: AuthenticationConfiguration
jwt: []
`

// commonFreePort returns a TCP port free on every one of ips.
func commonFreePort(ips []string) (string, error) {
	for range 20 {
		first, err := net.Listen("tcp", net.JoinHostPort(ips[0], "0"))
		if err != nil {
			return "", fmt.Errorf("pick a free port on %s: %w", ips[0], err)
		}
		_, port, _ := net.SplitHostPort(first.Addr().String())
		ls := []net.Listener{first}
		ok := true
		for _, ip := range ips[1:] {
			l, err := net.Listen("tcp", net.JoinHostPort(ip, port))
			if err != nil {
				ok = false
				break
			}
			ls = append(ls, l)
		}
		for _, l := range ls {
			l.Close()
		}
		if ok {
			return port, nil
		}
	}
	return "", fmt.Errorf("no port free on all of %v after 20 tries", ips)
}

// startInstance starts in's process and waits until it answers /readyz on
// its own address.
func (c *Cluster) startInstance(ctx context.Context, in *Instance) error {
	in.mu.Lock()
	args := slices.Clone(in.args)
	in.mu.Unlock()
	p, err := startProcess(in.Name, in.Hostname, in.bin, args, in.env, in.logPath)
	if err != nil {
		return err
	}
	in.mu.Lock()
	in.proc = p
	in.mu.Unlock()
	cfg, err := c.InstanceRESTConfig(in, UserAdmin)
	if err != nil {
		return err
	}
	if err := pollReady(ctx, p, func(ctx context.Context) error { return readyzAt(ctx, rest.CopyConfig(cfg)) }); err != nil {
		return fmt.Errorf("%s not ready: %w\n--- last lines of %s ---\n%s", in.Name, err, in.logPath, p.logTail(40))
	}
	return nil
}

// Instances returns an HA cluster's instances (nil for a single-instance
// cluster), in the order of InstanceAddresses.
func (c *Cluster) Instances() []*Instance { return c.instances }

// LoadBalancer is the HA cluster's TCP load balancer, nil otherwise.
func (c *Cluster) LoadBalancer() *TCPBalancer { return c.lb }

// CAPEM returns the CA certificate the kubeconfigs trust, PEM encoded.
func (c *Cluster) CAPEM() ([]byte, error) { return os.ReadFile(c.caFile) }

// InstanceRESTConfig is RESTConfig(user) aimed at one instance's own
// address instead of the load balancer.
func (c *Cluster) InstanceRESTConfig(in *Instance, userName string) (*rest.Config, error) {
	cfg, err := c.RESTConfig(userName)
	if err != nil {
		return nil, err
	}
	cfg.Host = "https://" + in.Address
	return cfg, nil
}

// WriteKubeconfig writes a kubeconfig for user that points at server (an
// https URL) and trusts the cluster's CA: for a client that goes through
// another front end, such as an HTTPBalancer.
func (c *Cluster) WriteKubeconfig(path, userName, server string) error {
	ca, err := c.CAPEM()
	if err != nil {
		return err
	}
	u, ok := c.users[userName]
	if !ok {
		return fmt.Errorf("unknown user %q", userName)
	}
	return writeKubeconfig(path, server, ca, userName, u.token)
}

// KillInstance kills in's process with SIGKILL, as a crash would: it does
// not shut down gracefully, so its lease stays in the EndpointSlices until
// it expires.
func (c *Cluster) KillInstance(in *Instance) error { return in.process().kill() }

// RestartInstance starts in again after KillInstance and waits until it is
// ready and the EndpointSlices list every instance again.
func (c *Cluster) RestartInstance(ctx context.Context, in *Instance) error {
	if exited, _ := in.process().exited(); !exited {
		return fmt.Errorf("%s is still running", in.Name)
	}
	if err := c.startInstance(ctx, in); err != nil {
		return err
	}
	return c.waitEndpoints(ctx)
}

// RestartInstanceWith kills in (SIGKILL) and starts it again with extra
// appended to its command line from now on (a repeated flag overrides the
// earlier value: "--profiling=false"), waiting as RestartInstance does.
// Its identity Lease stays (same hostname), renewed by the new process.
func (c *Cluster) RestartInstanceWith(ctx context.Context, in *Instance, extra ...string) error {
	if err := c.KillInstance(in); err != nil {
		return err
	}
	in.mu.Lock()
	in.args = append(in.args, extra...)
	in.mu.Unlock()
	return c.RestartInstance(ctx, in)
}

// EndpointAddresses lists the ready addresses (IP:port) of the
// default/kubernetes EndpointSlices, sorted: the API server instances as
// clients discover them.
func (c *Cluster) EndpointAddresses(ctx context.Context) ([]string, error) {
	cs, err := c.Clientset(UserAdmin)
	if err != nil {
		return nil, err
	}
	list, err := cs.DiscoveryV1().EndpointSlices(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=kubernetes"})
	if err != nil {
		return nil, fmt.Errorf("list the default/kubernetes EndpointSlices: %w", err)
	}
	var addrs []string
	for _, es := range list.Items {
		for _, p := range es.Ports {
			if p.Port == nil {
				continue
			}
			for _, ep := range es.Endpoints {
				if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
					continue
				}
				for _, a := range ep.Addresses {
					addrs = append(addrs, net.JoinHostPort(a, strconv.Itoa(int(*p.Port))))
				}
			}
		}
	}
	slices.Sort(addrs)
	return slices.Compact(addrs), nil
}

// waitEndpoints waits until the EndpointSlices list exactly the instances.
func (c *Cluster) waitEndpoints(ctx context.Context) error {
	var want []string
	for _, in := range c.instances {
		want = append(want, in.Address)
	}
	slices.Sort(want)
	var got []string
	var lastErr error
	err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		got, lastErr = c.EndpointAddresses(ctx)
		return lastErr == nil && slices.Equal(got, want), nil
	})
	if err != nil {
		return fmt.Errorf("the default/kubernetes EndpointSlices list %v, want %v (last error: %v): %w", got, want, lastErr, err)
	}
	return nil
}
