package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// TestReplayCommandFile replays a scenario file on our two columns: stdout
// carries only the report, progress goes to stderr, --fail-on decides the
// exit code, --svg writes the chart.
func TestReplayCommandFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "small.yaml")
	if err := os.WriteFile(path, []byte(smallScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	svg := filepath.Join(dir, "t.svg")
	stdout, stderr, code := runReplay(t, path, "--columns", "unpatched,pr141899", "-o", "json", "--svg", svg, "--stall-timeout", "20s")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res struct {
		Kind                string  `json:"kind"`
		StallTimeoutSeconds float64 `json:"stallTimeoutSeconds"`
		Columns             []struct {
			Name    string `json:"name"`
			Clients []struct {
				Name                string   `json:"name"`
				Outcome             string   `json:"outcome"`
				StoppedAfterSeconds *float64 `json:"stoppedAfterSeconds"`
			} `json:"clients"`
			BlockedGoroutines int `json:"blockedGoroutines"`
		} `json:"columns"`
		Timeline *struct{} `json:"timeline"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("stdout is not the JSON report: %v\n%s", err, stdout)
	}
	var got []string
	for _, c := range res.Columns {
		for _, cl := range c.Clients {
			s := c.Name + "/" + cl.Name + "=" + cl.Outcome
			if cl.StoppedAfterSeconds != nil {
				s += "@" + strings.TrimSuffix(strings.TrimSuffix(formatFloat(*cl.StoppedAfterSeconds), ".0"), "")
			}
			got = append(got, s)
		}
	}
	want := []string{"unpatched/stuck=blocked", "unpatched/reader=completed", "pr141899/stuck=stopped@20", "pr141899/reader=completed"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	if res.Kind != "Replay" || res.StallTimeoutSeconds != 20 || res.Timeline == nil {
		t.Errorf("kind %q, stall timeout %v, timeline %v", res.Kind, res.StallTimeoutSeconds, res.Timeline != nil)
	}
	if !strings.Contains(stderr, "unpatched column done") || !strings.Contains(stderr, "timeline chart written to "+svg) {
		t.Errorf("stderr:\n%s", stderr)
	}
	if b, err := os.ReadFile(svg); err != nil || !bytes.HasPrefix(b, []byte("<svg ")) {
		t.Errorf("--svg: %v", err)
	}
}

func formatFloat(f float64) string { b, _ := json.Marshal(f); return string(b) }

// TestReplayFrom derives a scenario from the real capture in testdata
// (metrics: 2000 pods; the dumps: the stuck and the slow watch of rand2).
func TestReplayFrom(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "kube-apiserver-v1.37.2", "seed-repro", "t2")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("capture not present:", err)
	}
	stdout, stderr, code := runReplay(t, "--from", dir, "--print-scenario")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"name: from-t2", "namespace: rand2", "count: 2000", "model: stops-after 1"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("derived scenario lacks %q:\n%s", want, stdout)
		}
	}
}

// TestReplayFromSeedReproBundle derives a scenario from the real capture
// directory (captures in subdirectories): object counts and sizes must
// come from its metrics, and the seed's client must be freed by the patch
// only.
func TestReplayFromSeedReproBundle(t *testing.T) {
	// Not in parallel, though the package's longest test under -race (17 s
	// of wall alone, 20 s of CPU): its upstream column runs k8s.io/apiserver's cacher in
	// this process, whose watchers TestAnalyzeDumpOfAnotherProcessIsNotAllClear
	// would find in its dump of the process.
	dir := filepath.Dir(golden.Fixture("t1"))
	code, out, errOut := run(t, nil, "replay", "--from", dir, "--print-scenario")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "count: 2000") || strings.Contains(out, "bytes: 2048") {
		t.Errorf("derived scenario does not use the bundle's metrics (2000 pods of ~20 KiB):\n%s", out)
	}
	code, out, errOut = run(t, nil, "replay", "--from", dir, "-o", "json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r struct {
		Columns []struct {
			Name    string `json:"name"`
			Clients []struct {
				Name    string `json:"name"`
				Outcome string `json:"outcome"`
			} `json:"clients"`
		} `json:"columns"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"upstream": "blocked", "unpatched": "blocked", "pr141899": "stopped", "complete": "stopped"}
	for _, c := range r.Columns {
		if got := c.Clients[0].Outcome; !strings.Contains(c.Clients[0].Name, "slow-informer") || got != want[c.Name] {
			t.Errorf("column %s: %s %s, want a client named after slow-informer (among its candidates) %s", c.Name, c.Clients[0].Name, got, want[c.Name])
		}
	}
}

func TestSanitizeName(t *testing.T) {
	tests := []struct{ in, want string }{
		{in: "apiserver-1", want: "apiserver-1"},
		{in: "Incident 2026/11.29", want: "incident-2026-11.29"},
		{in: "..--", want: "bundle"},
		{in: "", want: "bundle"},
		{in: "\x1b[31mred", want: "31mred"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := sanitizeName(tt.in); got != tt.want {
				t.Errorf("sanitizeName(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
