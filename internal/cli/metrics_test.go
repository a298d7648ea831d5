package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
)

type metricsDoc struct {
	Kind       string `json:"kind"`
	APIServers []struct {
		Name      string `json:"name"`
		Resources []struct {
			Group                string   `json:"group"`
			Resource             string   `json:"resource"`
			Watchers             *float64 `json:"watchers"`
			InitEventsPerSecond  *float64 `json:"initEventsPerSecond"`
			EventsDispatched     *float64 `json:"eventsDispatched"`
			TerminatedWatchers   *float64 `json:"terminatedWatchers"`
			CacheCapacity        *float64 `json:"cacheCapacity"`
			EventsDispatchedRate *float64 `json:"eventsDispatchedPerSecond"`
		} `json:"resources"`
		PriorityLevels []struct {
			Name           string   `json:"name"`
			ExecutingSeats *float64 `json:"executingSeats"`
			LimitSeats     *float64 `json:"limitSeats"`
		} `json:"priorityLevels"`
	} `json:"apiservers"`
}

func TestMetricsFromFilesAndLive(t *testing.T) {
	t.Parallel()
	t1, t2 := golden.Fixture("t1"), golden.Fixture("t2")
	a := fakeapiserver.Start(t, t1, t2)
	kc := fakeapiserver.Kubeconfig(t, a, fakeapiserver.TokenAdmin)
	for name, args := range map[string][]string{
		"files, one sample":  {"metrics", filepath.Join(t2, "metrics.txt"), "-o", "json"},
		"files, two samples": {"metrics", t1, t2, "-o", "json"},
		"live, two samples":  {"metrics", "--kubeconfig", kc, "--apiserver", a.Address(), "--interval", "83s", "-o", "json"},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := runLive(t, args...)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var d metricsDoc
			if err := json.Unmarshal([]byte(out), &d); err != nil {
				t.Fatal(err)
			}
			if d.Kind != "WatchMetrics" || len(d.APIServers) != 1 {
				t.Fatalf("kind %q, %d apiservers", d.Kind, len(d.APIServers))
			}
			s := d.APIServers[0]
			var pods, gd bool
			for _, r := range s.Resources {
				if r.Group == "" && r.Resource == "pods" {
					pods = r.Watchers != nil && *r.Watchers == 4 && r.CacheCapacity != nil
					if strings.Contains(name, "two") && r.EventsDispatchedRate == nil {
						t.Errorf("two samples must give rates: %+v", r)
					}
				}
			}
			for _, p := range s.PriorityLevels {
				if p.Name == "global-default" {
					gd = p.ExecutingSeats != nil && *p.ExecutingSeats == 2 && p.LimitSeats != nil && *p.LimitSeats == 49
				}
			}
			if !pods || !gd {
				t.Errorf("pods watchers=4 found: %v; global-default 2/49 seats found: %v\n%s", pods, gd, out)
			}
		})
	}
	// Live reads fetch /metrics only.
	for _, p := range a.Requests() {
		if !strings.HasPrefix(p, "/metrics") && p != "/version" {
			t.Errorf("metrics fetched %s", p)
		}
	}
}

func TestMetricsErrors(t *testing.T) {
	t.Parallel()
	code, _, errOut := run(t, nil, "metrics", golden.Fixture("t2"), "--interval", "10s")
	if code != ExitError || !strings.Contains(errOut, "--interval applies to live reads") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = run(t, nil, "metrics", filepath.Join(golden.Fixture("t2"), "apf-requests.txt"))
	if code != ExitError || !strings.Contains(errOut, "no /metrics found") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// TestMetricsRefusesAStrayNote: `metrics notes.txt` refuses a file that is not exposition.
func TestMetricsRefusesAStrayNote(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(p, []byte("ticket 4711\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, nil, "metrics", p)
	if code != ExitError || out != "" || !strings.Contains(errOut, "notes.txt: unrecognized content") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestEveryPieceOfEvidenceIsOfTheProcessItClaimsInMetrics: metrics says
// when /version contradicts kubernetes_build_info, as diagnose does, on
// stderr and in the report.
func TestEveryPieceOfEvidenceIsOfTheProcessItClaimsInMetrics(t *testing.T) {
	s := hostile(t, "/version", &fakeapiserver.Hostility{Kind: fakeapiserver.ErrorBody, Status: 200, Body: `{"gitVersion":"v1.20.0","goVersion":"go1.26.8"}`})
	kc := fakeapiserver.Kubeconfig(t, s, fakeapiserver.TokenAdmin)
	code, out, errOut := runLive(t, "metrics", "--kubeconfig", kc, "--apiserver", s.Address())
	const want = "the versions contradict each other: /version says v1.20.0, but kubernetes_build_info says v1.37.2"
	if code != ExitOK || !strings.Contains(errOut, want) {
		t.Errorf("exit %d, stderr %q\nwant %q", code, errOut, want)
	}
	if !strings.Contains(out, want) {
		t.Errorf("the report does not say it:\n%s", out)
	}
}
