package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// startEtcd starts etcd on free loopback ports and waits for /health. Ports
// are picked by binding :0 and releasing it, so another process may grab one
// in between; a start that fails on "address already in use" is retried.
func (c *Cluster) startEtcd(ctx context.Context, opts Options) (string, error) {
	var lastErr error
	for attempt := 1; attempt <= 3; attempt++ {
		ports, err := freePorts(2)
		if err != nil {
			return "", err
		}
		clientURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
		peerURL := "http://127.0.0.1:" + strconv.Itoa(ports[1])
		dataDir := filepath.Join(c.dir, "etcd", "data-"+strconv.Itoa(attempt))
		args := []string{
			"--name=e2e",
			"--data-dir=" + dataDir,
			"--listen-client-urls=" + clientURL,
			"--advertise-client-urls=" + clientURL,
			"--listen-peer-urls=" + peerURL,
			"--initial-advertise-peer-urls=" + peerURL,
			"--initial-cluster=e2e=" + peerURL,
			"--initial-cluster-state=new",
			// The data is thrown away with the test; skipping fsync makes
			// writing 2000 pods of 20 KB several times faster.
			"--unsafe-no-fsync=true",
			"--log-level=warn",
		}
		p, err := startProcess("etcd", "", opts.EtcdBin, args, nil, filepath.Join(c.dir, "logs", "etcd.log"))
		if err != nil {
			return "", err
		}
		c.etcd = p
		err = pollReady(ctx, p, func(ctx context.Context) error { return etcdHealthy(ctx, clientURL) })
		if err == nil {
			return clientURL, nil
		}
		lastErr = fmt.Errorf("etcd not ready: %w\n--- last lines of %s ---\n%s", err, p.logPath, p.logTail(30))
		_ = p.stop(5 * time.Second)
		c.etcd = nil
		if !strings.Contains(p.logTail(30), "address already in use") {
			return "", lastErr
		}
	}
	return "", lastErr
}

func etcdHealthy(ctx context.Context, clientURL string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, clientURL+"/health", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var health struct {
		Health string `json:"health"`
		Reason string `json:"reason"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&health); err != nil {
		return fmt.Errorf("GET /health: %s: %w", resp.Status, err)
	}
	if resp.StatusCode != http.StatusOK || health.Health != "true" {
		return fmt.Errorf("GET /health: %s: health %q %s", resp.Status, health.Health, health.Reason)
	}
	return nil
}
