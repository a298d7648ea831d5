package dumpgen

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// apfOnlyStart is the first request's start in the captures
// WriteAPFOnlyCaptures writes; the first capture is taken 10 minutes
// after it, the second 90 s after the first.
var apfOnlyStart = time.Date(2026, 11, 29, 10, 20, 0, 0, time.UTC)

// WriteAPFOnlyCaptures writes two captures of one API server process
// into dir/t1 and dir/t2, as a server without profiling
// (--profiling=false, or RBAC without /debug/pprof) leaves them: no
// goroutine dump, only an APF dump_requests with details listing the same
// n executing pod watches (WriteAPFRequests) in both, /metrics with
// process_start_time_seconds and an apiserver_watch_events_total of pods
// that does not grow between them, and captured-at.txt. analyze reads the
// two as samples of one process and finds every watch stuck: a relist
// storm on a server that serves no goroutine dump. It returns the two
// directories.
func WriteAPFOnlyCaptures(dir string, n int) ([]string, error) {
	var out []string
	for i, name := range []string{"t1", "t2"} {
		d := filepath.Join(dir, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
		at := apfOnlyStart.Add(10*time.Minute + time.Duration(i)*90*time.Second)
		if err := os.WriteFile(filepath.Join(d, "captured-at.txt"), []byte(at.Format(time.RFC3339)+"\n"), 0o644); err != nil {
			return nil, err
		}
		metrics := fmt.Sprintf("process_start_time_seconds %d\ngo_goroutines %d\napiserver_watch_events_total{group=\"\",resource=\"pods\",version=\"v1\"} 4698\n",
			apfOnlyStart.Add(-time.Hour).Unix(), 4*n+2000)
		if err := os.WriteFile(filepath.Join(d, "metrics.txt"), []byte(metrics), 0o644); err != nil {
			return nil, err
		}
		f, err := os.Create(filepath.Join(d, "apf-requests.txt"))
		if err != nil {
			return nil, err
		}
		if err := WriteAPFRequests(f, n, apfOnlyStart); err != nil {
			f.Close()
			return nil, err
		}
		if err := f.Close(); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}
