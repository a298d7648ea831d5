package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/watch-doctor/watch-doctor/internal/golden"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/metrics"
)

func metricsGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Assert(t, name, got)
}

func metricsCapture(t *testing.T, which string) *metrics.Snapshot {
	t.Helper()
	dir := golden.Fixture(which)
	f, err := os.Open(filepath.Join(dir, "metrics.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := metrics.Parse(f, "seed-repro/"+which+"/metrics.txt")
	if err != nil {
		t.Fatal(err)
	}
	at, err := os.ReadFile(filepath.Join(dir, "captured-at.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if s.CapturedAt, err = time.Parse(time.RFC3339, strings.TrimSpace(string(at))); err != nil {
		t.Fatal(err)
	}
	return metrics.Extract(s)
}

// metricsFixture builds a small 1.33-style exposition (resource label in
// "<resource>.<group>" form, watch events by kind) with an unknown family.
func metricsFixture(t *testing.T) *metrics.Snapshot {
	t.Helper()
	const text = `# HELP apiserver_longrunning_requests [STABLE] Gauge of all active long-running apiserver requests.
# TYPE apiserver_longrunning_requests gauge
apiserver_longrunning_requests{component="apiserver",group="apps",resource="deployments",scope="cluster",subresource="",verb="WATCH",version="v1"} 2
# HELP apiserver_init_events_total [ALPHA] Counter of init events processed in watch cache broken by resource type.
# TYPE apiserver_init_events_total counter
apiserver_init_events_total{resource="deployments.apps"} 40
# HELP watch_cache_capacity [ALPHA] Total capacity of watch cache broken by resource type.
# TYPE watch_cache_capacity gauge
watch_cache_capacity{resource="deployments.apps"} 100
# HELP apiserver_watch_cache_resource_version [ALPHA] Current resource version of watch cache broken by resource type.
# TYPE apiserver_watch_cache_resource_version gauge
apiserver_watch_cache_resource_version{resource="deployments.apps"} 9000
# HELP apiserver_watch_events_total [ALPHA] Number of events sent in watch clients
# TYPE apiserver_watch_events_total counter
apiserver_watch_events_total{group="apps",kind="Deployment",version="v1"} 77
apiserver_watch_events_total{group="example.com",kind="Widget",version="v1"} 5
# HELP apiserver_watch_frobnications_total [ALPHA] Something new.
# TYPE apiserver_watch_frobnications_total counter
apiserver_watch_frobnications_total{group="apps",resource="deployments"} 1
# TYPE go_goroutines gauge
go_goroutines 812
`
	s, err := metrics.Parse(strings.NewReader(text), "old-apiserver.prom")
	if err != nil {
		t.Fatal(err)
	}
	return metrics.Extract(s)
}

func TestRenderMetrics(t *testing.T) {
	t1, t2 := metricsCapture(t, "t1"), metricsCapture(t, "t2")
	rates, err := metrics.Rates(t1, t2, 0)
	if err != nil {
		t.Fatal(err)
	}
	one := metrics.Report{APIServers: []metrics.APIServer{{Name: "127.0.0.1:6443", Snapshot: t2}}}
	two := metrics.Report{APIServers: []metrics.APIServer{{Name: "127.0.0.1:6443", Snapshot: t2, Rates: rates}}}
	multi := metrics.Report{APIServers: []metrics.APIServer{
		{Name: "kube-apiserver-a", Snapshot: t2},
		{Name: "kube-apiserver-b", Err: errors.New(`get /metrics: forbidden: add nonResourceURLs: ["/metrics"], verbs: ["get"]`)},
		{Name: "old", Snapshot: metricsFixture(t)},
	}}
	tests := []struct {
		name   string
		report metrics.Report
		format Format
	}{
		{"one-sample", one, FormatTable},
		{"one-sample", one, FormatWide},
		{"one-sample", one, FormatJSON},
		{"one-sample", one, FormatYAML},
		{"two-samples", two, FormatTable},
		{"two-samples", two, FormatWide},
		{"two-samples", two, FormatJSON},
		{"multi", multi, FormatTable},
		{"multi", multi, FormatJSON},
	}
	for _, tt := range tests {
		t.Run(tt.name+"-"+string(tt.format), func(t *testing.T) {
			var buf bytes.Buffer
			if err := Print(&buf, tt.report, Options{Format: tt.format}); err != nil {
				t.Fatal(err)
			}
			ext := map[Format]string{FormatTable: "txt", FormatWide: "wide.txt", FormatJSON: "json", FormatYAML: "yaml"}[tt.format]
			metricsGolden(t, "metrics-"+tt.name+"."+ext, buf.Bytes())
		})
	}
}

// TestRenderMetricsContract checks the JSON fields other tools rely on.
func TestRenderMetricsContract(t *testing.T) {
	t1, t2 := metricsCapture(t, "t1"), metricsCapture(t, "t2")
	rates, err := metrics.Rates(t1, t2, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []Format{FormatJSON, FormatYAML} {
		t.Run(string(f), func(t *testing.T) {
			var buf bytes.Buffer
			r := metrics.Report{APIServers: []metrics.APIServer{{Name: "a", Snapshot: t2, Rates: rates}}}
			if err := Print(&buf, r, Options{Format: f}); err != nil {
				t.Fatal(err)
			}
			b := buf.Bytes()
			if f == FormatYAML {
				if b, err = yaml.YAMLToJSON(b); err != nil {
					t.Fatal(err)
				}
			}
			var doc map[string]any
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			if doc["kind"] != "WatchMetrics" {
				t.Errorf("kind = %v", doc["kind"])
			}
			server := doc["apiservers"].([]any)[0].(map[string]any)
			if server["name"] != "a" {
				t.Errorf("name = %v", server["name"])
			}
			var pods map[string]any
			for _, r := range server["resources"].([]any) {
				if m := r.(map[string]any); m["group"] == "" && m["resource"] == "pods" {
					pods = m
				}
			}
			for _, k := range []string{"watchers", "initEvents", "terminatedWatchers", "eventsDispatched", "cacheCapacity",
				"initEventsPerSecond", "terminatedWatchersPerSecond", "eventsDispatchedPerSecond"} {
				if _, ok := pods[k]; !ok {
					t.Errorf("pods has no %q", k)
				}
			}
			pl := server["priorityLevels"].([]any)[0].(map[string]any)
			for _, k := range []string{"name", "executingSeats", "limitSeats", "executingRequests"} {
				if _, ok := pl[k]; !ok {
					t.Errorf("priority level has no %q", k)
				}
			}
			if _, ok := server["missing"].([]any); !ok {
				t.Errorf("missing is %T, want a list", server["missing"])
			}
		})
	}
}

// TestRenderMetricsAbsentIsNull: an absent value is null in JSON, "-" in
// tables, never 0.
func TestRenderMetricsAbsentIsNull(t *testing.T) {
	snap := metricsFixture(t)
	var buf bytes.Buffer
	if err := Print(&buf, metrics.Report{APIServers: []metrics.APIServer{{Name: "x", Snapshot: snap}}}, Options{Format: FormatJSON}); err != nil {
		t.Fatal(err)
	}
	var doc api.WatchMetrics
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	s := doc.APIServers[0]
	if s.ResidentMemoryBytes != nil {
		t.Errorf("residentMemoryBytes = %v, want null", *s.ResidentMemoryBytes)
	}
	for _, r := range s.Resources {
		if r.Resource == "deployments" && r.TerminatedWatchers == nil {
			// a counter the release defines but never incremented reads 0
			t.Errorf("deployments terminatedWatchers is null, want 0 (listed in missing)")
		}
	}
}

func TestRenderMetricsBadFormat(t *testing.T) {
	err := Print(&bytes.Buffer{}, metrics.Report{}, Options{Format: Format("xml")})
	if want := `unsupported output format "xml": use one of table, wide, json, yaml`; err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
}
