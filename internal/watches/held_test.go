package watches

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

func heldHandler(id int64, wait int) HeldHandler {
	return HeldHandler{
		Handler:        api.Handler{GoroutineID: id, State: "select", WaitMinutes: wait, Block: api.HandlerClientNotReading, ConnGoroutineID: id - 200, ConnInDump: true},
		APFGoroutineID: id + 1,
	}
}

func TestJudgeHeld(t *testing.T) {
	at := t0.Add(10 * time.Minute)
	withHeld := func(s Sample, hs ...HeldHandler) Sample {
		s.Dump.Held = hs
		return s
	}
	tests := []struct {
		name        string
		sample      Sample
		want        []verdict
		wantSummary api.Summary
	}{
		{
			"held three minutes, alone: exact client",
			withHeld(sample(at, nil, watchRequest("slow-informer", at.Add(-200*time.Second))), heldHandler(700, 3)),
			[]verdict{{ID: 700, Type: api.HeldAfterWatcherClosed, Severity: api.SeverityCritical, User: "slow-informer", Match: api.MatchExact}},
			api.Summary{HeldAfterWatcherClosed: 1, Goroutines: 100},
		},
		{
			"held under a minute: no finding, its request stays unmatched",
			withHeld(sample(at, nil, watchRequest("slow-informer", at.Add(-40*time.Second))), heldHandler(700, 0)),
			nil,
			api.Summary{Goroutines: 100},
		},
		{
			// The held handler (3 minutes) fits only the older request;
			// the stuck watcher (2 minutes) then gets the other.
			"held beside a stuck watcher: each gets its own request",
			withHeld(sample(at, []api.Watcher{initialWatcher(1000, 2)},
				watchRequest("old", at.Add(-210*time.Second)),
				watchRequest("newer", at.Add(-130*time.Second))), heldHandler(700, 3)),
			[]verdict{
				{ID: 700, Type: api.HeldAfterWatcherClosed, Severity: api.SeverityCritical, User: "old", Match: api.MatchExact},
				{ID: 1000, Type: api.StuckInitialEvents, Severity: api.SeverityCritical, User: "newer", Match: api.MatchExact},
			},
			api.Summary{StuckWatches: 1, StuckGoroutines: 3, StuckSeats: 1, HeldAfterWatcherClosed: 1, Goroutines: 100},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Diagnose([]Server{{Name: "a", Samples: []Sample{tt.sample}}}, Options{})
			if diff := cmp.Diff(tt.want, verdicts(r)); diff != "" {
				t.Errorf("verdicts (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantSummary, r.Summary); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
			for _, f := range r.Findings {
				if f.Type != api.HeldAfterWatcherClosed {
					continue
				}
				if f.Phase != api.PhaseClosed || !cmp.Equal(f.GoroutineIDs, []int64{700, 701}) {
					t.Errorf("held finding: phase %q, goroutines %v; want closed, [700 701]", f.Phase, f.GoroutineIDs)
				}
				if !strings.Contains(strings.Join(r.Advice, "\n"), "after their watcher was closed") {
					t.Errorf("advice lacks the held handlers:\n%s", strings.Join(r.Advice, "\n"))
				}
			}
		})
	}
}

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

// The advice counts only seats the evidence attributes and names the
// candidates of an ambiguous finding, never one of them alone.
func TestHeldAdvice(t *testing.T) {
	held := func(c *api.Client, cands ...api.Request) api.Finding {
		return api.Finding{Type: api.HeldAfterWatcherClosed, Client: c, Candidates: cands}
	}
	tests := []struct {
		name string
		fs   []api.Finding
		want []string
	}{
		{"exact", []api.Finding{held(&api.Client{User: "alice", Match: api.MatchExact, Seats: 2})},
			[]string{"1 watch handler(s) still hold 2 APF seat(s)", `restart or fix "alice", which`}},
		{"ambiguous, one level", []api.Finding{held(&api.Client{Match: api.MatchAmbiguous, Seats: 1, PriorityLevel: "global-default"}, api.Request{User: "b"}, api.Request{User: "a"})},
			[]string{"hold 1 APF seat(s)", `one of "b" | "a" (ambiguous: check each)`}},
		{"ambiguous, seats unknown", []api.Finding{held(&api.Client{Match: api.MatchAmbiguous}, api.Request{User: "a"}), held(nil)},
			[]string{"2 watch handler(s) still hold APF seats (0 known; 2 handler(s) of unknown seats)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := heldAdvice(&api.Report{Findings: tt.fs})
			if len(got) != 1 {
				t.Fatalf("advice = %q, want one line", got)
			}
			for _, w := range tt.want {
				if !strings.Contains(got[0], w) {
					t.Errorf("advice %q lacks %q", got[0], w)
				}
			}
		})
	}
	if got := heldAdvice(&api.Report{}); got != nil {
		t.Errorf("no held finding: advice = %q", got)
	}
}
