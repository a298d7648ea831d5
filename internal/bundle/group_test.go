package bundle

import (
	"bytes"
	"path/filepath"
	"runtime/pprof"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/golden"
)

func TestServersGroupsSamplesOfOneProcess(t *testing.T) {
	l, err := Load([]string{golden.Fixture("t2"), golden.Fixture("t1")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ss := l.Servers()
	if len(ss) != 1 || len(ss[0].Samples) != 2 {
		t.Fatalf("servers = %d, want one with two samples", len(ss))
	}
	if !ss[0].Samples[0].CapturedAt.Before(ss[0].Samples[1].CapturedAt) {
		t.Errorf("samples not ordered by capture time")
	}
	if ss[0].Name != filepath.Dir(golden.Fixture("t1")) {
		t.Errorf("name = %q", ss[0].Name)
	}
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
