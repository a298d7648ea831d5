package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// commonAPIServerArgs writes the service-account keys and the token file
// and returns the kube-apiserver flags every instance shares: everything
// but its addresses, port, serving certificate and endpoint reconciler.
func (c *Cluster) commonAPIServerArgs(etcdURL string) ([]string, error) {
	certDir := filepath.Join(c.dir, "certs")
	saKey := filepath.Join(certDir, "service-account.key")
	saPub := filepath.Join(certDir, "service-account.pub")
	if err := writeServiceAccountKeys(saKey, saPub); err != nil {
		return nil, err
	}
	tokenFile := filepath.Join(c.dir, "tokens.csv")
	if err := writeTokenFile(tokenFile, c.users); err != nil {
		return nil, err
	}
	return []string{
		"--etcd-servers=" + etcdURL,
		"--token-auth-file=" + tokenFile,
		"--authorization-mode=RBAC",
		"--profiling=true",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + saPub,
		"--service-account-signing-key-file=" + saKey,
		"--service-cluster-ip-range=" + serviceCIDR,
	}, nil
}

// serviceCIDR is --service-cluster-ip-range; the kubernetes Service gets its
// first address, which the serving certificates of an HA cluster include.
const (
	serviceCIDR     = "10.0.0.0/24"
	kubernetesSvcIP = "10.0.0.1"
)

func (c *Cluster) startAPIServer(ctx context.Context, opts Options, etcdURL string) error {
	certDir := filepath.Join(c.dir, "certs")
	common, err := c.commonAPIServerArgs(etcdURL)
	if err != nil {
		return err
	}

	var lastErr error
	for attempt := 1; attempt <= 3; attempt++ {
		ports, err := freePorts(1)
		if err != nil {
			return err
		}
		c.server = "https://127.0.0.1:" + strconv.Itoa(ports[0])
		args := append([]string{
			"--advertise-address=127.0.0.1",
			"--bind-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(ports[0]),
			// No cert/key given: the API server generates a self-signed CA
			// and serving certificate (for 127.0.0.1 and localhost) here.
			"--cert-dir=" + certDir,
			// The lease endpoint reconciler refuses a loopback advertise
			// address; there is no Service traffic to route anyway. StartHA
			// runs it, on addresses of their own.
			"--endpoint-reconciler-type=none",
		}, common...)
		args = append(args, opts.ExtraAPIServerArgs...)
		p, err := startProcess("kube-apiserver", "", opts.KubeAPIServerBin, args, opts.APIServerEnv, filepath.Join(c.dir, "logs", "kube-apiserver.log"))
		if err != nil {
			return err
		}
		c.apiserver = p
		// The serving certificate appears in --cert-dir a moment after start.
		// Until it does there is no CA to trust, hence no kubeconfig.
		err = pollReady(ctx, p, func(ctx context.Context) error {
			if c.caFile == "" {
				if err := c.writeClientFiles(certDir); err != nil {
					return err
				}
			}
			return c.readyz(ctx)
		})
		if err == nil {
			return nil
		}
		lastErr = fmt.Errorf("kube-apiserver not ready: %w\n--- last lines of %s ---\n%s", err, p.logPath, p.logTail(40))
		_ = p.stop(10 * time.Second)
		c.apiserver = nil
		c.caFile = ""
		if !strings.Contains(p.logTail(40), "address already in use") {
			return lastErr
		}
	}
	return lastErr
}

// writeClientFiles extracts the CA from the API server's generated serving
// bundle and writes ca.crt and one kubeconfig per user.
func (c *Cluster) writeClientFiles(certDir string) error {
	caPEM, err := extractCA(filepath.Join(certDir, "apiserver.crt"))
	if err != nil {
		return err
	}
	return c.writeKubeconfigs(caPEM)
}

// writeKubeconfigs writes ca.crt and one kubeconfig per user, for c.server.
func (c *Cluster) writeKubeconfigs(caPEM []byte) error {
	caFile := filepath.Join(c.dir, "ca.crt")
	if err := os.WriteFile(caFile, caPEM, 0o644); err != nil {
		return err
	}
	for _, name := range Users() {
		if err := writeKubeconfig(kubeconfigPath(c.dir, name), c.server, caPEM, name, c.users[name].token); err != nil {
			return err
		}
	}
	c.caFile = caFile
	return nil
}

// readyz asks /readyz as admin; any error or an answer other than "ok" means
// not ready.
func (c *Cluster) readyz(ctx context.Context) error {
	cfg, err := c.RESTConfig(UserAdmin)
	if err != nil {
		return err
	}
	return readyzAt(ctx, cfg)
}

func readyzAt(ctx context.Context, cfg *rest.Config) error {
	cfg.Timeout = 5 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("GET /readyz: %w: %s", err, body)
	}
	if strings.TrimSpace(string(body)) != "ok" {
		return fmt.Errorf("GET /readyz: %q", body)
	}
	return nil
}

// pollReady calls check every 250 ms until it succeeds, the process exits, or
// ctx ends.
func pollReady(ctx context.Context, p *process, check func(context.Context) error) error {
	var last error
	err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if exited, err := p.exited(); exited {
			return false, err
		}
		last = check(ctx)
		return last == nil, nil
	})
	if err != nil && last != nil && errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w (last check: %v)", err, last)
	}
	return err
}
