package probe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The testdata files are cut from shared/fixtures/kube-apiserver-v1.37.2/seed-repro/t2:
// the APF request dump as it is, and seven whole goroutines of the debug=2
// dump (the dumping goroutine, a healthy watcher, both initial-events
// senders, two handlers in writeDataFromHandler, a watcher past its initial
// events). goroutine-debug2-pr141899-http1-excerpt.txt is cut from a
// capture of TestPatchedServers' pr141899 server (E2E_CAPTURE_DIR), 30 s in:
// the node reader's HTTP/1.1 connection goroutine, blocked in a socket
// write under (*WatchServer).HandleHTTP after its watcher was stopped, and
// its two children (APF's wait, net/http's background read).

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseGoroutinesFixture(t *testing.T) {
	gs, err := ParseGoroutines(readTestdata(t, "goroutine-debug2-t2-excerpt.txt"))
	if err != nil {
		t.Fatal(err)
	}
	type summary struct {
		ID          int
		State       string
		WaitMinutes int
		Top         string
		CreatedBy   string
		ParentID    int
	}
	var got []summary
	for _, g := range gs {
		got = append(got, summary{g.ID, g.State, g.WaitMinutes, g.Functions[0], g.CreatedBy, g.ParentID})
	}
	const (
		cacher = "k8s.io/apiserver/pkg/storage/cacher."
		write  = "golang.org/x/net/http2.(*serverConn).writeDataFromHandler"
		h2     = "golang.org/x/net/http2.(*serverConn).scheduleHandler"
	)
	want := []summary{
		{72616, "running", 0, "runtime/pprof.writeGoroutineStacks", h2, 72596},
		{3151, "select", 2, cacher + "(*cacheWatcher).process", cacher + "(*Cacher).Watch", 2852},
		{33542, "select", 0, write, h2, 33539},
		{33545, "select", 0, SendWatchCacheEvent, cacher + "(*Cacher).Watch", 33542},
		{33988, "select", 2, SendWatchCacheEvent, cacher + "(*Cacher).Watch", 33855},
		{33855, "select", 2, write, h2, 33847},
		{34633, "select", 0, cacher + "(*cacheWatcher).process", cacher + "(*Cacher).Watch", 33856},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseGoroutines mismatch (-want +got):\n%s", diff)
	}

	var senders []int
	var events []string
	for _, g := range InitialEventsSenders(gs) {
		senders = append(senders, g.ID)
		events = append(events, g.Event)
	}
	if diff := cmp.Diff([]int{33545, 33988}, senders); diff != "" {
		t.Errorf("InitialEventsSenders mismatch (-want +got):\n%s", diff)
	}
	// The event argument of sendWatchCacheEvent, as the dump prints it.
	for i, e := range events {
		if !strings.HasPrefix(e, "0x") {
			t.Errorf("sender %d: event %q, want the pointer argument", senders[i], e)
		}
	}
}

func TestParseGoroutinesHeaders(t *testing.T) {
	tests := []struct {
		name   string
		header string
		want   Goroutine
	}{
		{"plain", "goroutine 1 [running]:", Goroutine{ID: 1, State: "running"}},
		{"minutes", "goroutine 7 [select, 12 minutes]:", Goroutine{ID: 7, State: "select", WaitMinutes: 12}},
		{"locked", "goroutine 9 [syscall, 3 minutes, locked to thread]:", Goroutine{ID: 9, State: "syscall", WaitMinutes: 3}},
		{"parenthesised state", "goroutine 4 [chan receive (nil chan)]:", Goroutine{ID: 4, State: "chan receive (nil chan)"}},
		{"GOTRACEBACK=system", "goroutine 5 gp=0xc000007c00 m=nil [IO wait, 1 minutes]:", Goroutine{ID: 5, State: "IO wait", WaitMinutes: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gs, err := ParseGoroutines(tt.header + "\nmain.f(0x1)\n\t/x/main.go:3 +0x1\n")
			if err != nil {
				t.Fatal(err)
			}
			tt.want.Functions = []string{"main.f"}
			if diff := cmp.Diff([]Goroutine{tt.want}, gs); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseGoroutinesInvalid(t *testing.T) {
	for name, dump := range map[string]string{
		"empty":            "",
		"not a dump":       "<html>forbidden</html>\n",
		"malformed header": "goroutine x [running]:\nmain.f()\n",
	} {
		t.Run(name, func(t *testing.T) {
			if gs, err := ParseGoroutines(dump); err == nil {
				t.Errorf("ParseGoroutines(%q) = %v, want an error", dump, gs)
			}
		})
	}
}

func TestParseAPFRequestsFixture(t *testing.T) {
	got, err := ParseAPFRequests(readTestdata(t, "apf-requests-t2.txt"))
	if err != nil {
		t.Fatal(err)
	}
	watch := func(user, queue, arrived string) APFRequest {
		return APFRequest{
			PriorityLevel: "global-default", FlowSchema: "global-default", RequestIndexInQueue: queue,
			InitialSeats: "1", UserName: user, Verb: "watch",
			APIPath: "/api/v1/namespaces/rand2/pods", Namespace: "rand2", Resource: "pods", ArriveTime: arrived,
		}
	}
	want := []APFRequest{
		{
			PriorityLevel: "exempt", FlowSchema: "exempt", RequestIndexInQueue: "-1", InitialSeats: "1",
			UserName: "admin", Verb: "get", APIPath: "/debug/api_priority_and_fairness/dump_requests",
			ArriveTime: "2026-11-29T10:24:33.564290502Z",
		},
		watch("slow-informer", "-1", "2026-11-29T10:22:03.339182246Z"),
		watch("paced-reader", "-1", "2026-11-29T10:22:03.308778137Z"),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseAPFRequests mismatch (-want +got):\n%s", diff)
	}
	for _, r := range got {
		if !r.Executing() {
			t.Errorf("%s %s: Executing() = false, want true", r.UserName, r.Verb)
		}
	}
}

func TestParseAPFRequestsInvalid(t *testing.T) {
	for name, dump := range map[string]string{
		"empty":      "",
		"no details": "PriorityLevelName, FlowSchemaName, QueueIndex, RequestIndexInQueue, FlowDistingsher, ArriveTime, InitialSeats, FinalSeats, AdditionalLatency, StartTime\n",
	} {
		t.Run(name, func(t *testing.T) {
			if rs, err := ParseAPFRequests(dump); err == nil {
				t.Errorf("ParseAPFRequests(%q) = %v, want an error", dump, rs)
			}
		})
	}
}

// TestCountWatchGoroutinesPR141899 reads the pr141899 capture of the
// repository's testdata (30 s stall timeout, taken 90 s in): the slow
// informer's watcher is gone, its handler still blocked writing and its
// APF goroutine still waiting; the paced reader's watcher, handler and APF
// goroutine are there. Both over HTTP/2.
func TestCountWatchGoroutinesPR141899(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "kube-apiserver-v1.37.2", "pr141899", "t90s", "goroutine-debug2.txt"))
	if err != nil {
		t.Fatal(err)
	}
	gs, err := ParseGoroutines(string(b))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]WatchGoroutines{TransportH2: {Watchers: 1, Writers: 2, APFWaits: 2}}
	if diff := cmp.Diff(want, CountWatchGoroutines(gs)); diff != "" {
		t.Errorf("CountWatchGoroutines (-want +got):\n%s", diff)
	}
}

// TestCountWatchGoroutinesHTTP1 reads the HTTP/1.1 handler that pr141899
// left blocked in a socket write, with its APF goroutine still waiting.
func TestCountWatchGoroutinesHTTP1(t *testing.T) {
	gs, err := ParseGoroutines(readTestdata(t, "goroutine-debug2-pr141899-http1-excerpt.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]WatchGoroutines{TransportH1: {Writers: 1, APFWaits: 1}}
	if diff := cmp.Diff(want, CountWatchGoroutines(gs)); diff != "" {
		t.Errorf("CountWatchGoroutines (-want +got):\n%s", diff)
	}
	// Without its handler goroutine, the APF waiter's transport is unknown.
	var orphan []Goroutine
	for _, g := range gs {
		if len(g.Functions) > 0 && g.Functions[0] == APFWait {
			orphan = append(orphan, g)
		}
	}
	if diff := cmp.Diff(map[string]WatchGoroutines{"": {APFWaits: 1}}, CountWatchGoroutines(orphan)); diff != "" {
		t.Errorf("CountWatchGoroutines without the handler (-want +got):\n%s", diff)
	}
}

// TestV138InitialEventsSenders reads whole goroutines cut from
// testdata/kube-apiserver-v1.38.0-beta.0/seed-repro/t2: slow-informer's
// watcher (37950, stuck: sendWatchCacheEvent under processInitialEvents,
// through the watch cache interval's iterator), its handler (37946, in
// net/http's own HTTP/2 server of Go 1.27) and APF goroutine (37949);
// paced-reader's (39045, 39000, 39044); and a streaming watcher of the
// server's own (3381, in process alone), which is no sender.
func TestV138InitialEventsSenders(t *testing.T) {
	gs, err := ParseGoroutines(readTestdata(t, "goroutine-debug2-v1.38.0-beta.0-t2-excerpt.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var senders []int
	for _, g := range InitialEventsSenders(gs) {
		senders = append(senders, g.ID)
	}
	if diff := cmp.Diff([]int{37950, 39045}, senders); diff != "" {
		t.Errorf("InitialEventsSenders (-want +got):\n%s", diff)
	}
	var writing []int
	for _, g := range gs {
		if len(g.Functions) > 0 && IsWriteDataFromHandler(g.Functions[0]) {
			writing = append(writing, g.ID)
		}
	}
	if diff := cmp.Diff([]int{37946, 39000}, writing); diff != "" {
		t.Errorf("handlers in writeDataFromHandler (-want +got):\n%s", diff)
	}
	want := map[string]WatchGoroutines{TransportH2: {Watchers: 2, Writers: 2, APFWaits: 2}}
	if diff := cmp.Diff(want, CountWatchGoroutines(gs)); diff != "" {
		t.Errorf("CountWatchGoroutines (-want +got):\n%s", diff)
	}
}

// TestInitialEventsWatchersBetweenSends: a dump can catch a paced reader's
// watcher taking the interval's next event rather than blocked sending
// (v0.37.2 cache_watcher.go:480). It is still a watcher replaying initial
// events; a watcher in process (the live phase) is not, nor one in
// processInterval's own send of the end bookmark once in process.
func TestInitialEventsWatchersBetweenSends(t *testing.T) {
	const dump = `goroutine 4001 [runnable]:
k8s.io/apiserver/pkg/storage/cacher.(*lazySnapshotCacheIntervalSource).Next(0xc0)
	k8s.io/apiserver@v0.37.2/pkg/storage/cacher/watch_cache_interval.go:278 +0x1
k8s.io/apiserver/pkg/storage/cacher.(*watchCacheInterval).Next(0xc0)
	k8s.io/apiserver@v0.37.2/pkg/storage/cacher/watch_cache_interval.go:55 +0x1
k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).processInterval(0xc0, {0x1, 0x2}, 0xc1, 0x1)
	k8s.io/apiserver@v0.37.2/pkg/storage/cacher/cache_watcher.go:480 +0x1
created by k8s.io/apiserver/pkg/storage/cacher.(*Cacher).Watch in goroutine 4000
	k8s.io/apiserver@v0.37.2/pkg/storage/cacher/cacher.go:688 +0x13e5

goroutine 3214 [select]:
k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).process(0xc11e65f30a0, {0x47a8898, 0xc11e94e20f0}, 0x1)
	k8s.io/apiserver@v0.37.2/pkg/storage/cacher/cache_watcher.go:565 +0xb9
k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).processInterval(0xc11e65f30a0, {0x47a8898, 0xc11e94e20f0}, 0xc11eaabb660, 0x1)
	k8s.io/apiserver@v0.37.2/pkg/storage/cacher/cache_watcher.go:552 +0x675
created by k8s.io/apiserver/pkg/storage/cacher.(*Cacher).Watch in goroutine 3096
	k8s.io/apiserver@v0.37.2/pkg/storage/cacher/cacher.go:688 +0x13e5
`
	gs, err := ParseGoroutines(dump)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(InitialEventsSenders(gs)); n != 0 {
		t.Errorf("InitialEventsSenders = %d goroutines, want 0 (none is in sendWatchCacheEvent)", n)
	}
	var ids []int
	for _, g := range InitialEventsWatchers(gs) {
		ids = append(ids, g.ID)
	}
	if diff := cmp.Diff([]int{4001}, ids); diff != "" {
		t.Errorf("InitialEventsWatchers (-want +got):\n%s", diff)
	}
}

// TestWritersAreOfInitialEventsWatches: a dump can catch a watch handler
// of the server's own (a loopback informer: exempt from APF, past its
// initial events) writing an event. It has no APF goroutine and no
// initial-events watcher, so it is no writer of a stuck watch. Here the
// v1.38 excerpt's slow-informer handler (37946) is copied as 50001, a
// handler with no child.
func TestWritersAreOfInitialEventsWatches(t *testing.T) {
	dump := readTestdata(t, "goroutine-debug2-v1.38.0-beta.0-t2-excerpt.txt")
	start := strings.Index(dump, "goroutine 37946 [")
	if start < 0 {
		t.Fatal("goroutine 37946 not in the excerpt")
	}
	block, _, _ := strings.Cut(dump[start:], "\n\n")
	own := strings.Replace(block, "goroutine 37946 [", "goroutine 50001 [", 1)
	gs, err := ParseGoroutines(strings.TrimRight(dump, "\n") + "\n\n" + own + "\n")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(BlockedIn(gs, StdWriteDataFromHandler)); n != 3 {
		t.Fatalf("%d handlers in writeDataFromHandler, want 3 (the copy parsed)", n)
	}
	want := map[string]WatchGoroutines{TransportH2: {Watchers: 2, Writers: 2, APFWaits: 2}}
	if diff := cmp.Diff(want, CountWatchGoroutines(gs)); diff != "" {
		t.Errorf("CountWatchGoroutines (-want +got):\n%s", diff)
	}
	initial := InitialEventsHandlers(gs)
	if !initial[37946] || !initial[39000] || initial[50001] {
		t.Errorf("InitialEventsHandlers = %v, want 37946 and 39000, not 50001", initial)
	}
}
