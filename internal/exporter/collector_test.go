package exporter

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// newBare is an exporter with no server behind it, for collector tests
// that set its state directly.
func newBare(t *testing.T) *Exporter {
	t.Helper()
	e, err := New(Config{Interval: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// Every metric follows the naming conventions promlint checks, and
// Describe lists each desc once.
func TestCollectorLintsAndDescribes(t *testing.T) {
	t.Parallel()
	e := newBare(t)
	pause := 0.0002
	e.snap = []instanceSnap{{name: "10.0.0.1:6443", ok: true, at: lookedAt, read: true,
		states:    map[string]int{StateStuck: 1, StateProgressing: 1, StateUndecided: 0},
		resources: []resourceRow{{resource: "pods", level: "global-default", watches: 2, oldest: 40}}}}
	e.traces["10.0.0.1:6443"] = traceStat{window: 20, bytes: 4936972, pause: &pause}
	problems, err := testutil.CollectAndLint((*collector)(e))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
	ch := make(chan *prometheus.Desc, 2*len(allDescs))
	(*collector)(e).Describe(ch)
	close(ch)
	seen := map[string]bool{}
	for d := range ch {
		if seen[d.String()] {
			t.Errorf("described twice: %s", d)
		}
		seen[d.String()] = true
	}
	if len(seen) != len(allDescs) {
		t.Errorf("%d descs described, want %d", len(seen), len(allDescs))
	}
}

// The trace's cost is exported per instance; the pause only when known.
func TestCollectTraceStats(t *testing.T) {
	t.Parallel()
	e := newBare(t)
	pause := 0.00009
	e.traces["a:6443"] = traceStat{window: 20.5, bytes: 1000, pause: &pause}
	e.traces["b:6443"] = traceStat{bytes: 10}
	want := `
# HELP watchdoctor_last_trace_server_pause_seconds Non-GC stop-the-world time of the API server during the last traced look, its two samples and the trace: what it cost, at most.
# TYPE watchdoctor_last_trace_server_pause_seconds gauge
watchdoctor_last_trace_server_pause_seconds{apiserver="a:6443"} 9e-05
# HELP watchdoctor_trace_bytes_total Bytes of the execution traces read from the instance (rate probes included), summed.
# TYPE watchdoctor_trace_bytes_total counter
watchdoctor_trace_bytes_total{apiserver="a:6443"} 1000
watchdoctor_trace_bytes_total{apiserver="b:6443"} 10
# HELP watchdoctor_trace_window_seconds The span the last execution trace of the instance proved; 0 when it proved nothing.
# TYPE watchdoctor_trace_window_seconds gauge
watchdoctor_trace_window_seconds{apiserver="a:6443"} 20.5
watchdoctor_trace_window_seconds{apiserver="b:6443"} 0
`
	if err := testutil.GatherAndCompare(e.Registry(), strings.NewReader(want), "watchdoctor_trace_window_seconds", "watchdoctor_trace_bytes_total", "watchdoctor_last_trace_server_pause_seconds"); err != nil {
		t.Error(err)
	}
}
