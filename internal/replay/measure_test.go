package replay

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/cacher"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

func TestRenameOurCacher(t *testing.T) {
	for in, want := range map[string]string{
		"github.com/watch-doctor/watch-doctor/internal/cacher.(*cacheWatcher).processInterval": "k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).processInterval",
		"github.com/watch-doctor/watch-doctor/internal/cacherx.f":                              "github.com/watch-doctor/watch-doctor/internal/cacherx.f",
		"k8s.io/apiserver/pkg/storage/cacher.(*Cacher).Watch":                                  "k8s.io/apiserver/pkg/storage/cacher.(*Cacher).Watch",
		"runtime.gopark": "runtime.gopark",
	} {
		if got := RenameOurCacher(in); got != want {
			t.Errorf("RenameOurCacher(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestClassifyDumpOfOurOwnCacher: a watch of internal/cacher left unread
// in its initial replay is read from this process's own dump as upstream's
// would be: one watcher, keyed by the goroutine that opened the watch,
// initial and blocked.
func TestClassifyDumpOfOurOwnCacher(t *testing.T) {
	var objs []*cacher.Object
	for i := range 200 {
		objs = append(objs, &cacher.Object{Namespace: "ns", Name: fmt.Sprintf("p-%03d", i), ResourceVersion: uint64(i + 1), Size: 10})
	}
	o := NewOurs(api.ColumnUnpatched, 0)
	if err := o.Start([]ResourceState{{Name: "pods", Objects: objs, ResourceVersion: 200}}, testingclock.NewFakeClock(time.Unix(0, 0))); err != nil {
		t.Fatal(err)
	}
	defer o.Stop()
	yes := true
	w, err := o.Watch(context.Background(), WatchRequest{Resource: "pods", SendInitialEvents: &yes})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := o.Settle(context.Background(), func() bool { return true }); err != nil {
		t.Fatal(err)
	}
	if n := o.BlockedNow(); n != 1 {
		t.Fatalf("BlockedNow() = %d, want the unread watch", n)
	}
	dump, rename, err := o.Dump()
	if err != nil {
		t.Fatal(err)
	}
	me := GoroutineID()
	view, err := ClassifyDump(dump, rename, func(g *stacks.Goroutine) bool { return g.ID == me })
	if err != nil {
		t.Fatal(err)
	}
	got, ok := view.Watchers[me]
	if !ok || got.Phase != "initial" || !got.Blocked || got.ParentID != me || got.ID == 0 {
		t.Errorf("watchers %+v: want one started by goroutine %d, initial and blocked", view.Watchers, me)
	}
	if len(view.Goroutines) != 1 || view.Goroutines[0].ID != me {
		t.Errorf("kept %d goroutines, want this one (%d)", len(view.Goroutines), me)
	}
	if _, err := ClassifyDump([]byte("goroutine 1 [running]:\n\x00\x00"), nil, nil); err == nil {
		t.Error("ClassifyDump read a binary dump")
	}
}

// TestStackDumperGrowsAndReuses: the dump is every goroutine's, whole
// however small the first buffer, the same text pprof serves.
func TestStackDumperGrowsAndReuses(t *testing.T) {
	d := &StackDumper{buf: make([]byte, 64)}
	first := d.Dump()
	if !bytes.HasPrefix(first, []byte(fmt.Sprintf("goroutine %d [running]:\n", GoroutineID()))) || !bytes.Contains(first, []byte("TestStackDumperGrowsAndReuses")) {
		t.Errorf("dump does not start with this goroutine:\n%.300s", first)
	}
	if len(d.buf) <= 64 {
		t.Errorf("buffer of %d bytes: it did not grow", len(d.buf))
	}
	size := len(d.buf)
	d.Dump()
	if len(d.buf) != size {
		t.Errorf("buffer %d then %d bytes: not reused", size, len(d.buf))
	}
	pp, err := GoroutineDump()
	if err != nil || !bytes.HasPrefix(pp, []byte("goroutine ")) {
		t.Errorf("GoroutineDump: %v\n%.100s", err, pp)
	}
}
