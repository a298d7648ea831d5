package fakeapiserver

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/pkg/metrics"
)

// TestTrimmedMetricsKeepWhatTheToolReads: the served /metrics leaves out
// the unread families, and what watch-doctor extracts from it (the watch
// model, its version, the pauses, the watch evidence) is what it extracts
// from the file whole. With FullMetrics the file is served byte for byte.
func TestTrimmedMetricsKeepWhatTheToolReads(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"t1", "t2"} {
		t.Run(name, func(t *testing.T) {
			dir := golden.Fixture(name)
			whole, err := os.ReadFile(filepath.Join(dir, "metrics.txt"))
			if err != nil {
				t.Fatal(err)
			}
			trimmed := metricsOf(t, Start(t, dir))
			if len(trimmed) >= len(whole)/2 {
				t.Errorf("trimmed /metrics is %d bytes of %d: want under half", len(trimmed), len(whole))
			}
			if bytes.Contains(trimmed, []byte("\netcd_request_duration_seconds_bucket{")) || bytes.Contains(trimmed, []byte("# TYPE workqueue_")) {
				t.Error("an unread family is still served")
			}
			full := Start(t, dir)
			full.FullMetrics = true
			if got := metricsOf(t, full); !bytes.Equal(got, whole) {
				t.Errorf("FullMetrics served %d bytes, want the file's %d", len(got), len(whole))
			}
			a, b := parse(t, whole), parse(t, trimmed)
			if len(a.Resources) == 0 || len(a.PriorityLevels) == 0 {
				t.Fatalf("the capture's watch model is empty: %+v", a)
			}
			if diff := cmp.Diff(a, b, cmpopts.EquateNaNs()); diff != "" {
				t.Errorf("what watch-doctor extracts differs between the whole and the trimmed /metrics (-whole +trimmed):\n%s", diff)
			}
			sa, sb := sample(t, whole), sample(t, trimmed)
			if !reflect.DeepEqual(metrics.WatchRequests(sa), metrics.WatchRequests(sb)) || !reflect.DeepEqual(metrics.EventSizeBuckets(sa), metrics.EventSizeBuckets(sb)) || !reflect.DeepEqual(metrics.TerminatedByReason(sa), metrics.TerminatedByReason(sb)) {
				t.Error("the watch evidence differs between the whole and the trimmed /metrics")
			}
		})
	}
}

func metricsOf(t *testing.T, s *Server) []byte {
	t.Helper()
	code, body := get(t, s, TokenAdmin, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", code, body)
	}
	return []byte(body)
}

func sample(t *testing.T, b []byte) *metrics.Sample {
	t.Helper()
	s, err := metrics.Parse(bytes.NewReader(b), "metrics.txt")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func parse(t *testing.T, b []byte) *metrics.Snapshot {
	t.Helper()
	return metrics.Extract(sample(t, b))
}

// TestTrimmedMetricsFollowTheFile: a capture's metrics.txt written again is
// served as it is now, not as it was trimmed before.
func TestTrimmedMetricsFollowTheFile(t *testing.T) {
	t.Parallel()
	dir := CopyCapture(t, golden.Fixture("t1"), "2026-11-29T10:24:00Z")
	before := metricsOf(t, Start(t, dir))
	if err := os.WriteFile(filepath.Join(dir, "metrics.txt"), []byte("# TYPE go_goroutines gauge\ngo_goroutines 7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	after := metricsOf(t, Start(t, dir))
	if want := "# TYPE go_goroutines gauge\ngo_goroutines 7\n"; string(after) != want || bytes.Equal(before, after) {
		t.Errorf("served %q after the file was written again, want %q", after, want)
	}
}
