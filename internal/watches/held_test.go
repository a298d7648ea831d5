package watches

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

// TestCollectorHeld feeds the Collector a handler blocked writing and its
// APF goroutine, with and without the watcher goroutine it created.
func TestCollectorHeld(t *testing.T) {
	const conn = `goroutine 3000 [select]:
golang.org/x/net/http2.(*serverConn).serve(0x1, 0x2)
	/x/net/http2/server.go:1000 +0x1
net/http.(*conn).serve(0x3, {0x4, 0x5})
	/usr/local/go/src/net/http/server.go:2000 +0x1
created by net/http.(*Server).Serve in goroutine 1
	/usr/local/go/src/net/http/server.go:3000 +0x1
`
	const handler = `goroutine 3100 [select, 3 minutes]:
golang.org/x/net/http2.(*serverConn).writeDataFromHandler(0x1, 0x2, {0x3, 0x1000, 0x1000}, 0x0)
	/x/net/http2/server.go:1026 +0x1
golang.org/x/net/http2.(*responseWriterState).writeChunk(0x1, {0x2, 0x3, 0x4})
	/x/net/http2/server.go:2600 +0x1
k8s.io/apiserver/pkg/endpoints/handlers.(*WatchServer).HandleHTTP(0x1, {0x2, 0x3}, 0x4)
	/k8s.io/apiserver/pkg/endpoints/handlers/watch.go:445 +0x1
golang.org/x/net/http2.(*serverConn).runHandler(0x1, 0x2, 0x3, 0x4)
	/x/net/http2/server.go:2400 +0x1
created by golang.org/x/net/http2.(*serverConn).scheduleHandler in goroutine 3000
	/x/net/http2/server.go:2300 +0x1
`
	const apfWait = `goroutine 3101 [select, 3 minutes]:
k8s.io/apiserver/pkg/util/flowcontrol.(*initializationSignal).Wait(0x1?)
	/k8s.io/apiserver/pkg/util/flowcontrol/apf_context.go:92 +0x1
created by k8s.io/apiserver/pkg/server/filters.(*priorityAndFairnessHandler).Handle in goroutine 3100
	/k8s.io/apiserver/pkg/server/filters/priority-and-fairness.go:200 +0x1
`
	const watcher = `goroutine 3102 [select, 3 minutes]:
k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).sendWatchCacheEvent(0x1, 0x2)
	/k8s.io/apiserver/pkg/storage/cacher/cache_watcher.go:441 +0x1
k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).processInterval(0x1, {0x2, 0x3}, 0x4, 0x5)
	/k8s.io/apiserver/pkg/storage/cacher/cache_watcher.go:502 +0x1
created by k8s.io/apiserver/pkg/storage/cacher.(*Cacher).Watch in goroutine 3100
	/k8s.io/apiserver/pkg/storage/cacher/cacher.go:688 +0x1
`
	for _, tt := range []struct {
		name string
		dump string
		want []HeldHandler
	}{
		{"watcher gone: held", conn + "\n" + handler + "\n" + apfWait, []HeldHandler{{
			Handler: api.Handler{GoroutineID: 3100, State: "select", WaitMinutes: 3, Block: api.HandlerClientNotReading, ConnGoroutineID: 3000, ConnInDump: true,
				Transport: "http2", ConnAddress: "0x1", ConnWatches: 1},
			APFGoroutineID: 3101,
		}}},
		{"watcher still there: not held", conn + "\n" + handler + "\n" + apfWait + "\n" + watcher, nil},
		// A watcher loop renamed (a release this build does not know):
		// the goroutine the cacher started may be its live watcher.
		{"watcher of an unknown shape: not held", conn + "\n" + handler + "\n" + apfWait + "\n" + strings.NewReplacer("sendWatchCacheEvent", "emitWatchCacheEvent", "processInterval", "processInitEvts").Replace(watcher), nil},
		{"seat released (no APF goroutine): not held", conn + "\n" + handler, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCollector()
			sc := stacks.NewScanner(strings.NewReader(tt.dump))
			for sc.Next() {
				c.Add(sc.Goroutine())
			}
			if err := sc.Err(); err != nil {
				t.Fatal(err)
			}
			d := c.Dump(sc.Stats())
			if diff := cmp.Diff(tt.want, d.Held); diff != "" {
				t.Errorf("held (-want +got):\n%s", diff)
			}
			if want := strings.Count(tt.dump, "processInitEvts"); d.Unrecognised != want {
				t.Errorf("unrecognised %d, want %d", d.Unrecognised, want)
			}
		})
	}
}

// TestCollectorHeldRealCapture reads the capture of the pr141899 server
// (testdata/kube-apiserver-v1.37.2/pr141899/t90s): slow-informer's handler
// is held, blocked a minute or more, with its APF goroutine, and no watcher.
func TestCollectorHeldRealCapture(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "testdata", "kube-apiserver-v1.37.2", "pr141899", "t90s", "goroutine-debug2.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := NewCollector()
	sc := stacks.NewScanner(f)
	for sc.Next() {
		c.Add(sc.Goroutine())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	d := c.Dump(sc.Stats())
	if len(d.Held) != 1 {
		t.Fatalf("held handlers = %+v, want exactly one", d.Held)
	}
	h := d.Held[0]
	if h.Handler.GoroutineID != 16258 || h.Handler.WaitMinutes < 1 || h.Handler.Block != api.HandlerClientNotReading || h.APFGoroutineID == 0 {
		t.Errorf("held = %+v; want handler 16258 blocked writing for a minute or more, with its APF goroutine", h)
	}
}
