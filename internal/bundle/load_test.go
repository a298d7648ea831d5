package bundle

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/golden"
)

func TestLoadNamedFilesAreOneCapture(t *testing.T) {
	dump, apfDump := golden.Fixture("t2", "goroutine-debug2.txt"), golden.Fixture("t2", "apf-requests.txt")
	other := t.TempDir()
	b, err := os.ReadFile(apfDump)
	if err != nil {
		t.Fatal(err)
	}
	copied := filepath.Join(other, "apf.txt")
	os.WriteFile(copied, b, 0o644)
	for name, args := range map[string][]string{
		"same directory":        {dump, apfDump},
		"different directories": {dump, copied},
	} {
		l, err := Load(args, Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(l.Captures) != 1 || l.Captures[0].Dump == nil || l.Captures[0].Requests == nil {
			t.Errorf("%s: %d captures; want one holding the dump and the APF requests", name, len(l.Captures))
		}
	}
	f, err := os.Open(dump)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l, err := Load([]string{"-", apfDump}, Options{Stdin: f})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Captures) != 1 || l.Captures[0].Dump == nil || l.Captures[0].Requests == nil || l.Captures[0].Name != "command line" {
		t.Errorf("stdin and a file: %d captures named %q", len(l.Captures), l.Captures[0].Name)
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
	t.Parallel()
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
