package dumpgen

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/watch-doctor/watch-doctor/internal/watches"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

func TestTo138(t *testing.T) {
	const (
		send = cacherPkg + "(*cacheWatcher).sendWatchCacheEvent"
		iv   = cacherPkg + "(*cacheWatcher).processInterval"
		proc = cacherPkg + "(*cacheWatcher).process"
	)
	funcs := func(fs []ShapeFrame) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.Func)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		in   []ShapeFrame
		want []string
	}{
		{"initial, in send", []ShapeFrame{{Func: send, Args: "0x1, 0x2"}, {Func: iv, Args: "0x1, {0x3, 0x4}, 0x5, 0x0"}},
			[]string{send, cacherPkg + "(*cacheWatcher).processInitialEvents-range1", cacherPkg + "(*lazySnapshotCacheIntervalSource).All.func1-range1",
				"k8s.io/apiserver/pkg/storage/cacher/store.(*btreeStore).rangePrefix.func1.1", btreePkg + "(*node[...]).iterate",
				btreePkg + "(*BTree[...]).AscendGreaterOrEqual", "k8s.io/apiserver/pkg/storage/cacher/store.(*btreeStore).rangePrefix.func1",
				cacherPkg + "(*lazySnapshotCacheIntervalSource).All.func1", cacherPkg + "(*cacheWatcher).processInitialEvents", proc}},
		{"streaming, waiting", []ShapeFrame{{Func: proc}, {Func: iv, Args: "0x1, {0x3, 0x4}, 0x5, 0x1"}}, []string{proc}},
		{"streaming, in send", []ShapeFrame{{Func: send}, {Func: proc}, {Func: iv}}, []string{send, cacherPkg + "(*cacheWatcher).processEvent", proc}},
	} {
		got, ok := To138(tc.in)
		if !ok {
			t.Errorf("%s: To138 refused a v1.37 watcher stack", tc.name)
			continue
		}
		if d := cmp.Diff(tc.want, funcs(got)); d != "" {
			t.Errorf("%s: frames (-want +got):\n%s", tc.name, d)
		}
	}
	if _, ok := To138([]ShapeFrame{{Func: "main.main"}}); ok {
		t.Error("To138 took main.main for a watcher stack")
	}
}

// TestDerived138ReadsAsCaptured reads the real v1.37.2 dumps and their
// v1.38-shaped derivations through the classifier: the same watchers, by
// id, phase, send, handler and APF goroutine, and the same phase counts of
// the profiles.
func TestDerived138ReadsAsCaptured(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "kube-apiserver-v1.37.2", "seed-repro", "t2")
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	d2 := read("goroutine-debug2.txt")
	derived, err := Debug2To138(d2)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(d2, derived) || strings.Contains(string(derived), "processInterval") {
		t.Fatal("Debug2To138 left the v1.37 shape")
	}
	want, err := watches.ReadDump(bytes.NewReader(d2), watches.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := watches.ReadDump(bytes.NewReader(derived), watches.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The same watchers; only the loop they are in is named differently.
	if d := cmp.Diff(want.Watchers, got.Watchers, cmpopts.IgnoreFields(api.Watcher{}, "Loop")); d != "" {
		t.Errorf("watchers (-v1.37.2 +derived v1.38):\n%s", d)
	}
	initial := 0
	for _, w := range got.Watchers {
		if w.Phase == api.PhaseInitial && w.Blocked && w.Handler != nil && w.APFGoroutineID != 0 && w.Loop == "processInitialEvents" {
			initial++
		}
	}
	if initial == 0 {
		t.Error("no initial-phase watcher blocked in send with its handler and APF goroutine")
	}
	for _, tc := range []struct {
		name, format string
		derive       func([]byte) ([]byte, error)
	}{
		{"goroutine-debug1.txt", watches.FormatDebug1, Debug1To138},
		{"goroutine.pb.gz", watches.FormatProtobuf, ProfileTo138},
	} {
		b := read(tc.name)
		db, err := tc.derive(b)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		_, w, err := watches.ReadProfile(bytes.NewReader(b), tc.format)
		if err != nil {
			t.Fatal(err)
		}
		_, g, err := watches.ReadProfile(bytes.NewReader(db), tc.format)
		if err != nil {
			t.Fatalf("%s derived: %v", tc.name, err)
		}
		if d := cmp.Diff(w.PhaseCounts, g.PhaseCounts); d != "" {
			t.Errorf("%s phase counts (-v1.37.2 +derived v1.38):\n%s", tc.name, d)
		}
	}
}
