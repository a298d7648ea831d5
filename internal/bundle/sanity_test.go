package bundle

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/golden"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// writeFiles writes name -> content under dir and returns dir.
func writeFiles(t *testing.T, dir string, files map[string][]byte) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func fixture(t *testing.T, capture, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(golden.Fixture(capture, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Defect 1: a debug=2 dump of a Go program that is not kube-apiserver (this
// test binary's own) is flagged as foreign, not read as a healthy server.
func TestLoadFlagsDumpOfAnotherProcess(t *testing.T) {
	var dump bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&dump, 2); err != nil {
		t.Fatal(err)
	}
	dir := writeFiles(t, filepath.Join(t.TempDir(), "other"), map[string][]byte{"goroutine.txt": dump.Bytes()})
	l, err := Load([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Foreign(); len(got) != 1 || got[0] != dir {
		t.Errorf("Foreign() = %q, want [%q]", got, dir)
	}
	if !containsAll(l.Warnings, "no kube-apiserver code", "may be from another process") {
		t.Errorf("warnings %q do not say the dump may be from another process", l.Warnings)
	}
	real, err := Load([]string{golden.Fixture("t2")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := real.Foreign(); len(got) != 0 {
		t.Errorf("a real kube-apiserver capture is flagged foreign: %q", got)
	}
}

// Defect 3: APF requests that started after the goroutine dump was taken
// are not of the same moment: they are dropped with a warning.
func TestLoadDropsRequestsStartedAfterTheCapture(t *testing.T) {
	dir := writeFiles(t, filepath.Join(t.TempDir(), "mixed"), map[string][]byte{
		"goroutine-debug2.txt": fixture(t, "t1", "goroutine-debug2.txt"),
		"captured-at.txt":      fixture(t, "t1", "captured-at.txt"),
		"apf-requests.txt":     fixture(t, "t2", "apf-requests.txt"),
	})
	l, err := Load([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := l.Captures[0]
	for _, r := range c.Requests.Requests {
		if r.StartTime.After(c.CapturedAt.Add(requestSlack)) {
			t.Errorf("request of %q started at %s, after the capture at %s, is kept", r.User, r.StartTime, c.CapturedAt)
		}
	}
	if !containsAll(l.Warnings, "started after the capture", "apf-requests.txt", "not matched") {
		t.Errorf("no warning about requests after the capture: %q", l.Warnings)
	}
	// The watches that began before t1 are still there to be matched.
	found := false
	for _, r := range c.Requests.Requests {
		if r.User == "slow-informer" {
			found = true
		}
	}
	if !found {
		t.Error("slow-informer's request (started before the capture) was dropped")
	}
}

// Defect 4: a stray text file holding "word number" is not /metrics.
func TestDetectRequiresRealExposition(t *testing.T) {
	for _, s := range []string{"ticket 4711\n", "build 3\nfoo 2\n", "attempts{host=\"a\"} 3\n"} {
		if k, _, err := Open(strings.NewReader(s)); err == nil {
			t.Errorf("%q detected as %s, want unrecognized", s, k)
		}
	}
	for _, s := range []string{
		"# HELP go_goroutines Number of goroutines.\n# TYPE go_goroutines gauge\ngo_goroutines 12\n",
		"go_goroutines 12\n",
		"apiserver_flowcontrol_current_executing_seats{priority_level=\"x\"} 3\n",
		"process_start_time_seconds 1.7e9\n",
	} {
		if k, _, err := Open(strings.NewReader(s)); err != nil || k != api.FileMetrics {
			t.Errorf("%q: kind %s, err %v; want metrics", s, k, err)
		}
	}
	dir := writeFiles(t, filepath.Join(t.TempDir(), "t2"), map[string][]byte{
		"metrics.txt": fixture(t, "t2", "metrics.txt"),
		"notes.txt":   []byte("ticket 4711\n"),
	})
	if _, err := Load([]string{dir}, Options{}); err != nil {
		t.Errorf("a stray notes.txt fails a good capture: %v", err)
	}
}

// Defect 6: two dumps concatenated into one file are refused, naming the
// line where the second begins.
func TestLoadRefusesConcatenatedDumps(t *testing.T) {
	d := fixture(t, "t2", "goroutine-debug2.txt")
	lines := bytes.Count(d, []byte("\n"))
	if !bytes.HasSuffix(d, []byte("\n")) {
		d = append(d, '\n')
		lines++
	}
	for name, b := range map[string][]byte{
		"same dump twice": append(append([]byte{}, d...), d...),
		"t1 then t2":      append(append([]byte{}, fixture(t, "t1", "goroutine-debug2.txt")...), d...),
	} {
		t.Run(name, func(t *testing.T) {
			dir := writeFiles(t, filepath.Join(t.TempDir(), "cat"), map[string][]byte{"goroutine-debug2.txt": b})
			_, err := Load([]string{dir}, Options{})
			if err == nil {
				t.Fatal("concatenated dumps accepted")
			}
			if !strings.Contains(err.Error(), "goroutine-debug2.txt:") || !strings.Contains(err.Error(), "second goroutine dump starts") {
				t.Errorf("error %q does not name the file and the second dump", err)
			}
		})
	}
	_ = lines
}

// Defect 8: capture times before Kubernetes existed or in the future are
// refused; samples whose capture times contradict their goroutine ids are
// reordered only with a warning.
func TestLoadCaptureTimeSanity(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, ts := range []string{"1999-01-01T00:00:00Z", "2099-01-01T00:00:00Z"} {
		dir := writeFiles(t, filepath.Join(t.TempDir(), "c"), map[string][]byte{
			"goroutine-debug2.txt": fixture(t, "t2", "goroutine-debug2.txt"),
			"captured-at.txt":      []byte(ts + "\n"),
		})
		_, err := Load([]string{dir}, Options{Now: now})
		if err == nil || !strings.Contains(err.Error(), "captured-at.txt:1:") || !strings.Contains(err.Error(), ts) {
			t.Errorf("%s: err %v, want it refused naming captured-at.txt:1", ts, err)
		}
	}
	// t1's dump with t2's time and the other way round.
	root := t.TempDir()
	a := writeFiles(t, filepath.Join(root, "a"), map[string][]byte{
		"goroutine-debug2.txt": fixture(t, "t1", "goroutine-debug2.txt"),
		"metrics.txt":          fixture(t, "t1", "metrics.txt"),
		"captured-at.txt":      fixture(t, "t2", "captured-at.txt"),
	})
	b := writeFiles(t, filepath.Join(root, "b"), map[string][]byte{
		"goroutine-debug2.txt": fixture(t, "t2", "goroutine-debug2.txt"),
		"metrics.txt":          fixture(t, "t2", "metrics.txt"),
		"captured-at.txt":      fixture(t, "t1", "captured-at.txt"),
	})
	l, err := Load([]string{a, b}, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	l.Servers()
	if !containsAll(l.Warnings, "capture times", "goroutine ids") {
		t.Errorf("no warning that capture times contradict goroutine ids: %q", l.Warnings)
	}
}

func containsAll(ss []string, subs ...string) bool {
	for _, s := range ss {
		ok := true
		for _, sub := range subs {
			if !strings.Contains(s, sub) {
				ok = false
			}
		}
		if ok {
			return true
		}
	}
	return false
}
