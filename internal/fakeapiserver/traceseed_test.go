package fakeapiserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"
)

// The trace seed's samples are served whole (metrics.txt unzipped, the
// priority levels added), and its trace is the real one.
func TestTraceSeed(t *testing.T) {
	t.Parallel()
	dir := TraceSeedSample(t, "1")
	for _, f := range []string{"apf-requests.txt", "apf-priority-levels.txt", "captured-at.txt", "goroutine-debug1.txt", "metrics.txt", "version.json"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "metrics.txt"))
	if err != nil || !strings.Contains(string(b), "process_start_time_seconds") {
		t.Errorf("metrics.txt not unzipped: %v", err)
	}
	if tr := TraceSeed(t); len(tr) != 2468486 || !strings.HasPrefix(string(tr), "go 1.") {
		t.Errorf("the seed trace: %d bytes, %q", len(tr), tr[:min(16, len(tr))])
	}
}

// TraceClock takes the seconds a trace request asks for, whatever the
// answer; other requests take none.
func TestTraceClock(t *testing.T) {
	t.Parallel()
	s := Start(t, TraceSeedSample(t, "1"))
	s.TraceBody = []byte("go 1.26 trace\x00\x00\x00")
	start := time.Date(2026, 11, 29, 10, 23, 9, 0, time.UTC)
	s.TraceClock = testingclock.NewFakeClock(start)
	for _, p := range []string{"/metrics", "/debug/pprof/trace?seconds=1.5", "/debug/pprof/trace?seconds=x", "/debug/pprof/trace?seconds=20"} {
		if code, _ := get(t, s, TokenAdmin, p); code != 200 {
			t.Errorf("GET %s: %d", p, code)
		}
	}
	if got := s.TraceClock.Since(start); got != 21500*time.Millisecond {
		t.Errorf("the clock moved %s, want 21.5s", got)
	}
}
