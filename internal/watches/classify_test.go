package watches

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/dumpgen"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

const dumpHTTP1Vendored = `goroutine 10 [select, 3 minutes]:
k8s.io/kubernetes/vendor/k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).sendWatchCacheEvent(0x1, 0x2)
	vendor/k8s.io/apiserver/pkg/storage/cacher/cache_watcher.go:441 +0x107
k8s.io/kubernetes/vendor/k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).processInterval(0x1, {0x2, 0x3}, 0x4, 0x0)
	vendor/k8s.io/apiserver/pkg/storage/cacher/cache_watcher.go:502 +0x145
created by k8s.io/kubernetes/vendor/k8s.io/apiserver/pkg/storage/cacher.(*Cacher).Watch in goroutine 9
	vendor/k8s.io/apiserver/pkg/storage/cacher/cacher.go:688 +0x13e5

goroutine 9 [IO wait, 3 minutes]:
internal/poll.runtime_pollWait(0x1, 0x77)
	runtime/netpoll.go:351 +0x85
net.(*conn).Write(0x1, {0x2, 0x3, 0x4})
	net/net.go:200 +0x45
net/http.(*response).Write(0x1, {0x2, 0x3, 0x4})
	net/http/server.go:1700 +0x20
k8s.io/kubernetes/vendor/k8s.io/apiserver/pkg/endpoints/handlers.(*WatchServer).HandleHTTP(0x1, {0x2, 0x3}, 0x4)
	vendor/k8s.io/apiserver/pkg/endpoints/handlers/watch.go:445 +0x1698
net/http.(*conn).serve(0x1, {0x2, 0x3})
	net/http/server.go:2102 +0x625
created by net/http.(*Server).Serve in goroutine 1
	net/http/server.go:3454 +0x485

goroutine 11 [chan receive, 3 minutes]:
k8s.io/kubernetes/vendor/k8s.io/apiserver/pkg/util/flowcontrol.(*initializationSignal).Wait(0x1)
	vendor/k8s.io/apiserver/pkg/util/flowcontrol/apf_context.go:92 +0x19
created by k8s.io/kubernetes/vendor/k8s.io/apiserver/pkg/server/filters.(*priorityAndFairnessHandler).Handle in goroutine 9
	vendor/k8s.io/apiserver/pkg/server/filters/priority-and-fairness.go:231 +0x845

goroutine 13 gp=0xc000102a80 m=nil [select, 4 minutes]:
runtime.gopark(0x1, 0x2, 0x3, 0x4, 0x5)
	runtime/proc.go:462 +0xce fp=0xc000 sp=0xc000 pc=0x4
runtime.selectgo(0x1, 0x2, 0x3, 0x4, 0x5, 0x6)
	runtime/select.go:351 +0x837 fp=0xc000 sp=0xc000 pc=0x4
k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).sendWatchCacheEvent(0x1, 0x2)
	k8s.io/apiserver/pkg/storage/cacher/cache_watcher.go:441 +0x107 fp=0xc000 sp=0xc000 pc=0x4
k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).processInterval(0x1, {0x2, 0x3}, 0x4, 0x0)
	k8s.io/apiserver/pkg/storage/cacher/cache_watcher.go:502 +0x145 fp=0xc000 sp=0xc000 pc=0x4
runtime.goexit({})
	runtime/asm_amd64.s:1771 +0x1 fp=0xc000 sp=0xc000 pc=0x4
created by k8s.io/apiserver/pkg/storage/cacher.(*Cacher).Watch in goroutine 77
	k8s.io/apiserver/pkg/storage/cacher/cacher.go:688 +0x13e5

goroutine 12 [select]:
k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).process(0x1, {0x2, 0x3}, 0x1)
	k8s.io/apiserver/pkg/storage/cacher/cache_watcher.go:544 +0xb9
k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).processInterval(0x1, {0x2, 0x3}, 0x4, 0x1)
	k8s.io/apiserver/pkg/storage/cacher/cache_watcher.go:531 +0x414
created by k8s.io/apiserver/pkg/storage/cacher.(*Cacher).Watch in goroutine 99
	k8s.io/apiserver/pkg/storage/cacher/cacher.go:688 +0x13e5
`

func collect(t *testing.T, dump string) *Dump {
	t.Helper()
	sc := stacks.NewScanner(strings.NewReader(dump))
	c := NewCollector()
	for sc.Next() {
		c.Add(sc.Goroutine())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return c.Dump(sc.Stats())
}

func TestCollectorVendoredHTTP1AndSystemTraceback(t *testing.T) {
	d := collect(t, dumpHTTP1Vendored)
	want := []api.Watcher{
		{GoroutineID: 10, Phase: api.PhaseInitial, InSend: true, Blocked: true, State: "select", WaitMinutes: 3,
			CacheWatcher: "0x1", Event: "0x2", Loop: "processInterval",
			Handler:        &api.Handler{GoroutineID: 9, State: "IO wait", WaitMinutes: 3, Block: api.HandlerClientNotReading, ConnGoroutineID: 9, ConnInDump: true, Transport: "http/1.1", ConnAddress: "0x1", ConnWatches: 1},
			APFGoroutineID: 11},
		{GoroutineID: 12, Phase: api.PhaseStreaming, State: "select", Loop: "process"},
		// GOTRACEBACK=system: runtime frames shown, runtime.goexit last.
		{GoroutineID: 13, Phase: api.PhaseInitial, InSend: true, Blocked: true, State: "select", WaitMinutes: 4, CacheWatcher: "0x1", Event: "0x2", Loop: "processInterval"},
	}
	if diff := cmp.Diff(want, d.Watchers); diff != "" {
		t.Errorf("watchers (-want +got):\n%s", diff)
	}
	if !d.HasParentIDs || d.Goroutines != 5 {
		t.Errorf("HasParentIDs %v, goroutines %d", d.HasParentIDs, d.Goroutines)
	}
}

func TestCollectorGo120DumpSaysParentsAreUnknown(t *testing.T) {
	old := strings.NewReplacer(" in goroutine 9\n", "\n", " in goroutine 1\n", "\n", " in goroutine 99\n", "\n", " in goroutine 77\n", "\n").Replace(dumpHTTP1Vendored)
	d := collect(t, old)
	if d.HasParentIDs {
		t.Fatal("a dump without parent ids must say so")
	}
	if d.Watchers[0].Handler != nil {
		t.Errorf("watcher linked to a handler without parent ids: %+v", d.Watchers[0].Handler)
	}
	if len(d.Notes) == 0 || !strings.Contains(d.Notes[0], "Go < 1.21") {
		t.Errorf("notes = %q", d.Notes)
	}
	// What the stuck verdict reads (internal/diagnosis) must not depend on
	// parent ids: both initial-phase watchers blocked a minute or more.
	var blocked []int64
	for _, w := range d.Watchers {
		if w.Phase == api.PhaseInitial && w.Blocked && w.WaitMinutes >= 1 {
			blocked = append(blocked, w.GoroutineID)
		}
	}
	if diff := cmp.Diff([]int64{10, 13}, blocked); diff != "" {
		t.Errorf("initial-phase watchers blocked a minute or more (-want +got):\n%s", diff)
	}
}

func TestRoleOfVendorSuffix(t *testing.T) {
	for fn, want := range map[string]bool{
		fnProcessInterval: true,
		"k8s.io/kubernetes/vendor/" + fnProcessInterval: true,
		"example.com/fork" + fnProcessInterval:          false,
		"x" + fnProcessInterval:                         false,
	} {
		if got := roleOf(fn) == roleIntervalLoop; got != want {
			t.Errorf("roleOf(%q) is processInterval's = %v, want %v", fn, got, want)
		}
	}
}

// TestWatcherOfReadsV138 reads the seed dump with its watchers in the v1.38
// shape (dumpgen.Debug2To138, derived) goroutine by goroutine, as the
// replay's upstream column reads its own process: WatcherOf gives each
// watcher the Collector's phase and send.
func TestWatcherOfReadsV138(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "kube-apiserver-v1.37.2", "seed-repro", "t2", "goroutine-debug2.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if b, err = dumpgen.Debug2To138(b); err != nil {
		t.Fatal(err)
	}
	var one []api.Watcher
	d, err := ReadDump(bytes.NewReader(b), ReadOptions{Each: func(g *stacks.Goroutine) error {
		if w, ok := WatcherOf(g); ok {
			one = append(one, w)
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	type brief struct {
		ID     int64
		Phase  api.Phase
		InSend bool
	}
	briefs := func(ws []api.Watcher) []brief {
		var out []brief
		for _, w := range ws {
			out = append(out, brief{w.GoroutineID, w.Phase, w.InSend})
		}
		slices.SortFunc(out, func(a, b brief) int { return int(a.ID - b.ID) })
		return out
	}
	want := briefs(d.Watchers)
	if diff := cmp.Diff(want, briefs(one)); diff != "" {
		t.Errorf("WatcherOf (-Collector +one by one):\n%s", diff)
	}
	if diff := cmp.Diff([]brief{{33545, api.PhaseInitial, true}, {33988, api.PhaseInitial, true}}, slices.DeleteFunc(want, func(b brief) bool { return b.Phase != api.PhaseInitial })); diff != "" {
		t.Errorf("initial-phase watchers (-want +got):\n%s", diff)
	}
}
