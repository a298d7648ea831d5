package e2e

// A real Prometheus (Debian's package, /usr/bin/prometheus) on loopback in
// the test's network namespace, scraping serve and evaluating the shipped
// rules file.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// prometheusBin is the Debian package's server (hack/install-promtool.sh
// installs it in run.sh's setup).
const prometheusBin = "/usr/bin/prometheus"

type prometheus struct{ base string }

// alertState is one alert of /api/v1/alerts.
type alertState struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	State       string            `json:"state"`
}

func (a alertState) same(b alertState) bool {
	return a.State == b.State && a.Labels["user"] == b.Labels["user"] && a.Labels["alertname"] == b.Labels["alertname"]
}

// startPrometheus starts Prometheus scraping target every 2 s and
// evaluating the shipped rules every 2 s (a short interval for the test;
// the rules file is the one deploy/ ships), and waits until it is ready.
func startPrometheus(t *testing.T, target string) *prometheus {
	t.Helper()
	if _, err := os.Stat(prometheusBin); err != nil {
		t.Fatalf("%s: %v (run.sh's setup installs Debian's prometheus package with hack/install-promtool.sh)", prometheusBin, err)
	}
	rules, err := filepath.Abs(shippedRules)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := fmt.Sprintf(`global:
  scrape_interval: 2s
  scrape_timeout: 2s
  evaluation_interval: 2s
rule_files:
- %s
scrape_configs:
- job_name: watch-doctor
  static_configs:
  - targets: [%q]
`, rules, target)
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	logPath := filepath.Join(dir, "prometheus.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(prometheusBin, "--config.file="+cfgPath, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		logFile.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("prometheus log (tail):\n%s", tail(string(b), 4000))
		}
	})
	p := &prometheus{base: "http://" + addr}
	err = wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		return httpStatus(ctx, p.base+"/-/ready") == http.StatusOK, nil
	})
	if err != nil {
		b, _ := os.ReadFile(logPath)
		t.Fatalf("prometheus never ready: %v\n%s", err, tail(string(b), 4000))
	}
	return p
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (p *prometheus) get(ctx context.Context, path string, data any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+path, nil)
	if err != nil {
		return err
	}
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer r.Body.Close()
	b, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
	if err != nil {
		return err
	}
	var env struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	if env.Status != "success" {
		return fmt.Errorf("GET %s: %s", path, env.Error)
	}
	return json.Unmarshal(env.Data, data)
}

// alerts reads /api/v1/alerts: pending and firing alerts.
func (p *prometheus) alerts(ctx context.Context) ([]alertState, error) {
	var d struct {
		Alerts []alertState `json:"alerts"`
	}
	err := p.get(ctx, "/api/v1/alerts", &d)
	return d.Alerts, err
}

// query runs an instant query and returns the values of its vector.
func (p *prometheus) query(ctx context.Context, q string) ([]float64, error) {
	var d struct {
		Result []struct {
			Value [2]any `json:"value"`
		} `json:"result"`
	}
	if err := p.get(ctx, "/api/v1/query?query="+url.QueryEscape(q), &d); err != nil {
		return nil, err
	}
	var out []float64
	for _, r := range d.Result {
		s, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("query %q: value %v: %w", q, r.Value[1], err)
		}
		out = append(out, v)
	}
	return out, nil
}
