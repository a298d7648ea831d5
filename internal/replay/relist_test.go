package replay

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// TestSlowClientBusyResource pins the loop the replay exists to show for a
// client slower than its resource (issue 37): the server closes its watch,
// it reads to the end, watches again from scratch and is closed again.
// The dispatcher's closures loop the slow clients in every column; the
// stall timeout adds its own for curl's and client-node's stacks, which
// then never have their initial events, where unpatched they did once. The healthy client is
// never closed. The upstream column is held to unpatched by the
// differential suite (internal/replay/upstream), this scenario included.
func TestSlowClientBusyResource(t *testing.T) {
	sc, err := Builtin("slow-client-busy-resource")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), sc, DefaultBackends(sc, nil), Options{})
	if err != nil {
		t.Fatal(err)
	}
	type loop struct {
		Closures, Returns int
		CaughtUp          bool
	}
	got := map[string]map[string]loop{}
	for _, col := range res.Columns {
		got[col.Name] = map[string]loop{}
		for _, c := range col.Clients {
			got[col.Name][c.Name] = loop{c.Closures, c.Returns, c.InitialDoneAtSeconds != nil}
			if c.Returns > 0 && !(c.ReturnSeatSeconds > 0 && c.ReturnSeatSeconds <= c.APFSeatSeconds) {
				t.Errorf("%s/%s: %d returns held %g of %g APF seat-seconds; want some, at most all", col.Name, c.Name, c.Returns, c.ReturnSeatSeconds, c.APFSeatSeconds)
			}
			if c.Returns > 0 && c.EventsReceived <= int64(c.InitialEvents) {
				t.Errorf("%s/%s: %d events over %d watches of %d initial events each: the returns replayed nothing", col.Name, c.Name, c.EventsReceived, c.Returns+1, c.InitialEvents)
			}
		}
	}
	want := map[string]map[string]loop{
		api.ColumnUnpatched: {
			"slow-client-go": {4, 3, true},
			"slow-curl":      {3, 2, true},
			"slow-node":      {3, 2, true},
			"fast-client":    {0, 0, true},
		},
		api.ColumnPR141899: {
			"slow-client-go": {4, 3, true},
			"slow-curl":      {3, 2, false},
			"slow-node":      {3, 3, false},
			"fast-client":    {0, 0, true},
		},
		api.ColumnComplete: {
			"slow-client-go": {4, 3, true},
			"slow-curl":      {5, 4, false},
			"slow-node":      {3, 3, false},
			"fast-client":    {0, 0, true},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("closures, returns, caught up (-want +got):\n%s", diff)
	}
	for _, col := range res.Columns {
		var stalled int64
		for _, c := range col.Counters {
			stalled += c.StalledWatchers
		}
		if col.Name != api.ColumnUnpatched && stalled == 0 {
			t.Errorf("%s: the stall timeout stopped no watcher; want curl's", col.Name)
		}
		if col.Returns < 2 || col.ReturnSeatSeconds <= 0 {
			t.Errorf("%s: %d returns, %g of their seat-seconds; want a loop that holds seats", col.Name, col.Returns, col.ReturnSeatSeconds)
		}
		if col.Name == api.ColumnUnpatched && col.BlockedGoroutines != 0 {
			t.Errorf("unpatched: %d watchers blocked at the end; want none: the dispatcher closes them all", col.BlockedGoroutines)
		}
	}
}

// TestRelistBackoff follows client-go's reflector backoff (relist.go):
// 800 ms doubling to 30 s, started over once 2 min passed since it last
// was.
func TestRelistBackoff(t *testing.T) {
	r := &clientRun{start: 10 * time.Second}
	var got []time.Duration
	for _, at := range []time.Duration{20, 21, 22, 23, 24, 25, 26, 27, 28, 129, 131, 200} {
		got = append(got, r.backoffDelay(at*time.Second))
	}
	ms := time.Millisecond
	want := []time.Duration{800 * ms, 1600 * ms, 3200 * ms, 6400 * ms, 12800 * ms, 25600 * ms, 30 * time.Second, 30 * time.Second, 30 * time.Second, 30 * time.Second, 800 * ms, 1600 * ms}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("delays (-want +got):\n%s", diff)
	}
}

// TestRelistNeedsAReader: a client that stops reading or leaves cannot
// relist; a healthy or paced one can.
func TestRelistNeedsAReader(t *testing.T) {
	for _, tt := range []struct{ model, wantErr string }{
		{"stops-after 1", `relist needs a model that keeps reading ("healthy" or "paced R/s"), not "stops-after 1"`},
		{"stops-after initial-events", `not "stops-after initial-events"`},
		{"disconnects-after 1m", `not "disconnects-after 1m"`},
		{"paced 2/s", ""},
		{"healthy", ""},
	} {
		t.Run(tt.model, func(t *testing.T) {
			src := fmt.Sprintf("name: r\nduration: 1m\nresources: [{name: pods, objects: [{namespace: ns, count: 1, bytes: 1}]}]\nclients: [{name: c, model: %q, relist: true}]\n", tt.model)
			_, err := Parse(strings.NewReader(src))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

// TestRelistCitations checks that the upstream lines relist.go cites, and
// the client loop mirrors, still say what it reads in them, in the
// releases go.mod pins, whenever they are in the module cache.
func TestRelistCitations(t *testing.T) {
	cache := os.Getenv("GOMODCACHE")
	if cache == "" {
		out, err := exec.Command("go", "env", "GOMODCACHE").Output()
		if err != nil {
			t.Skipf("go env GOMODCACHE: %v", err)
		}
		cache = strings.TrimSpace(string(out))
	}
	tests := []struct {
		file string
		line int
		want string
	}{
		{"k8s.io/client-go@v0.37.2/tools/cache/reflector.go", 62, "defaultBackoffInit = 800 * time.Millisecond"},
		{"k8s.io/client-go@v0.37.2/tools/cache/reflector.go", 63, "defaultBackoffMax  = 30 * time.Second"},
		{"k8s.io/client-go@v0.37.2/tools/cache/reflector.go", 65, "defaultBackoffReset  = 2 * time.Minute"},
		{"k8s.io/client-go@v0.37.2/tools/cache/reflector.go", 336, "backoff.DelayWithReset(reflectorClock, defaultBackoffReset)"},
		{"k8s.io/client-go@v0.37.2/tools/cache/reflector.go", 428, "r.delayHandler.Until(ctx, true, true,"},
		{"k8s.io/client-go@v0.37.2/tools/cache/reflector.go", 840, "for {"},
		{"k8s.io/client-go@v0.37.2/tools/cache/reflector.go", 887, "if watchListBookmarkReceived {"},
		{"k8s.io/apimachinery@v0.37.2/pkg/util/wait/backoff.go", 299, "case b.clock.Now().Sub(b.lastStart) > b.resetInterval:"},
		{"k8s.io/apiserver@v0.37.2/pkg/storage/cacher/cache_watcher.go", 180, "func (c *cacheWatcher) add(event *watchCacheEvent, timer *time.Timer) bool {"},
		{"k8s.io/apiserver@v0.37.2/pkg/storage/cacher/cache_watcher.go", 214, "Forcing %v watcher close due to unresponsiveness"},
		{"k8s.io/apiserver@v0.37.2/pkg/storage/cacher/cache_watcher.go", 436, "case <-c.done:"},
		{"k8s.io/apiserver@v0.37.2/pkg/storage/cacher/cache_watcher.go", 541, "utilflowcontrol.WatchInitialized(ctx)"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s:%d", filepath.Base(tt.file), tt.line), func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(cache, tt.file))
			if errors.Is(err, fs.ErrNotExist) {
				t.Skipf("%s is not in the module cache", tt.file)
			}
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(string(b), "\n")
			if tt.line > len(lines) || !strings.Contains(strings.Join(strings.Fields(lines[tt.line-1]), " "), strings.Join(strings.Fields(tt.want), " ")) {
				t.Errorf("%s:%d does not say %q", tt.file, tt.line, tt.want)
			}
		})
	}
}

// TestRelistNoteEnd: when a relisting client comes back after its watch
// ended. On HTTP/2 a reset or a timeout's end is met at once; a closed
// result channel, and any end on HTTP/1.1, once the client read what was
// in flight. Back at once while it never had its initial events, after the
// backoff once it had.
func TestRelistNoteEnd(t *testing.T) {
	go1 := api.Transport{Window: DefaultWindow, Refresh: api.RefreshGo, Lookahead: ptr(1)}
	http1 := api.Transport{Profile: api.ProfileHTTP1, Window: 4 << 20, Refresh: api.RefreshThreshold, RefreshBytes: 1 << 20, Lookahead: ptr(1)}
	tests := []struct {
		name        string
		tr          api.Transport
		end         endReason
		unread      bool // an event in flight, not read yet
		initialDone bool
		relist      bool
		want        *time.Duration
	}{
		{name: "reset on HTTP/2: at once", tr: go1, end: endStreamReset, unread: true, relist: true, want: ptr(50 * time.Second)},
		{name: "closed result, read to the end", tr: go1, end: endResultClosed, relist: true, want: ptr(50 * time.Second)},
		{name: "closed result, still in flight", tr: go1, end: endResultClosed, unread: true, relist: true},
		{name: "reset on HTTP/1.1, still in flight", tr: http1, end: endStreamReset, unread: true, relist: true},
		{name: "timeout on HTTP/1.1, read to the end", tr: http1, end: endTimeout, relist: true, want: ptr(50 * time.Second)},
		{name: "had its initial events: after the backoff", tr: go1, end: endResultClosed, initialDone: true, relist: true, want: ptr(50*time.Second + 800*time.Millisecond)},
		{name: "left on its own", tr: go1, end: endDisconnected, relist: true},
		{name: "does not relist", tr: go1, end: endStreamReset},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := endedHandler(Epoch().Add(40 * time.Second))
			h.end = tt.end
			h.st = newStream(tt.tr)
			if tt.unread {
				h.st.writeSomeLocked(h.st.startWriteLocked(1024, false, false))
			}
			h.st.end()
			// A paced client out of reads this tick: its decoder reads
			// ahead, its application takes nothing.
			r := &clientRun{spec: &Client{Relist: tt.relist}, model: Model{Kind: ModelPaced, Rate: 1}, h: h, start: 10 * time.Second}
			if tt.initialDone {
				r.markInitialDone(30 * time.Second)
			}
			r.read(50 * time.Second)
			r.noteEnd(50 * time.Second)
			if diff := cmp.Diff(tt.want, r.dueAt); diff != "" {
				t.Errorf("back at (-want +got):\n%s", diff)
			}
		})
	}
}
