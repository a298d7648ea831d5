package bundle

import (
	"bytes"
	"path/filepath"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/golden"
)

func TestServersGroupsSamplesOfOneProcess(t *testing.T) {
	t.Parallel()
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

func TestDisplayName(t *testing.T) {
	start := time.Date(2026, 11, 29, 10, 0, 0, 0, time.FixedZone("x", 3600))
	for _, tc := range []struct {
		name      string
		restarted bool
		start     time.Time
		want      string
	}{
		{"one process", false, start, "10.0.0.1:6443"},
		{"restarted", true, start, "10.0.0.1:6443 (process started 2026-11-29T09:00:00Z)"},
		{"restarted, start unknown", true, time.Time{}, "10.0.0.1:6443 (process started unknown)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DisplayName("10.0.0.1:6443", tc.restarted, tc.start); got != tc.want {
				t.Errorf("DisplayName = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestGroupsOfARestartedInstance: an instance whose captures come from two
// processes is two groups, each with its identity in fields.
func TestGroupsOfARestartedInstance(t *testing.T) {
	l, err := Load([]string{golden.Fixture("t1"), golden.Fixture("t2")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range l.Captures {
		c.Instance = "10.0.0.1:6443"
		c.Metrics.ProcessStartTime = float64(1.7e9 + i)
	}
	var got []ProcessCaptures
	for _, g := range l.Processes() {
		g.Captures = nil
		got = append(got, g)
	}
	want := []ProcessCaptures{
		{Name: "10.0.0.1:6443 (process started 2023-11-14T22:13:20Z)", Instance: "10.0.0.1:6443", ProcessStart: time.Unix(1.7e9, 0).UTC(), Restarted: true},
		{Name: "10.0.0.1:6443 (process started 2023-11-14T22:13:21Z)", Instance: "10.0.0.1:6443", ProcessStart: time.Unix(1.7e9+1, 0).UTC(), Restarted: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("groups (-want +got):\n%s", diff)
	}
	if s := l.Servers(); len(s) != 2 || s[0].Name != want[0].Name || s[1].Name != want[1].Name {
		t.Errorf("servers = %d, want one per group, named as the groups", len(s))
	}
}
