package replay

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// longestWriteWait replays a server writing events of size bytes as fast
// as the window allows to a client that reads rate events per second, and
// returns the longest time the server's write stayed blocked once the
// window first filled: how long a watcher behind that handler goes without
// a successful send.
func longestWriteWait(tr api.Transport, size int64, rate float64, events int) (time.Duration, int64) {
	s := newStream(tr)
	step := time.Duration(float64(time.Second) / rate)
	var (
		written     int
		cur         *wireEvent
		blockedAt   time.Duration
		blocked     bool
		longest     time.Duration
		readsNeeded = events
	)
	write := func(now time.Duration) {
		s.mu.Lock()
		defer s.mu.Unlock()
		for written < events || cur != nil {
			if cur == nil {
				cur = s.startWriteLocked(size, false, false)
			}
			if !s.writeSomeLocked(cur) {
				if !blocked {
					blocked, blockedAt = true, now
				}
				return
			}
			cur = nil
			written++
			if blocked {
				blocked = false
				longest = max(longest, now-blockedAt)
			}
		}
	}
	write(0)
	for now, read := step, 0; read < readsNeeded; now += step {
		read += len(s.consume(1))
		write(now)
	}
	return longest, s.windowUpdates
}

// TestFlowControlAnswer is the HTTP/2 answer in numbers: how long the API
// server's write, and so the watcher's send, waits for a client that reads
// 20 KiB events at 2.5 per second, under each refresh policy.
func TestFlowControlAnswer(t *testing.T) {
	one := 1
	tests := []struct {
		name    string
		tr      api.Transport
		size    int64
		rate    float64
		events  int
		want    time.Duration
		stalled bool // longer than the 30 s stall timeout
	}{
		{
			name: "client-go (x/net/http2 inflow.add, 4 KiB minimum refresh), 20 KiB events at 2.5/s",
			tr:   api.Transport{Window: 4 << 20, Refresh: api.RefreshGo, Lookahead: &one},
			size: 20 << 10, rate: 2.5, events: 3000, want: 400 * time.Millisecond,
		},
		{
			name: "client-go, 1 KiB events at 0.1/s: with the window used up every read refreshes",
			tr:   api.Transport{Window: 4 << 20, Refresh: api.RefreshGo, Lookahead: &one},
			size: 1 << 10, rate: 0.1, events: 6000, want: 10 * time.Second,
		},
		{
			name: "half-window refresh, 4 MiB window (the hint's assumption)",
			tr:   api.Transport{Window: 4 << 20, Refresh: api.RefreshHalfWindow, Lookahead: &one},
			size: 20 << 10, rate: 2.5, events: 3000, want: 41200 * time.Millisecond, stalled: true,
		},
		{
			name: "half-window refresh, 16 MiB window (OkHttp's defaults)",
			tr:   api.Transport{Window: 16 << 20, Refresh: api.RefreshHalfWindow, Lookahead: &one},
			size: 20 << 10, rate: 2.5, events: 3000, want: 164 * time.Second, stalled: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, updates := longestWriteWait(tt.tr, tt.size, tt.rate, tt.events)
			if got != tt.want {
				t.Errorf("longest write wait %v, want %v (%d window updates)", got, tt.want, updates)
			}
			if stalled := got > 30*time.Second; stalled != tt.stalled {
				t.Errorf("longer than the 30 s stall timeout: %v, want %v", stalled, tt.stalled)
			}
		})
	}
}

// TestGoRefreshPolicy checks inflow.add (x/net/http2 flow.go:36-56): credit
// is held while under 4 KiB and under what the server may still send.
func TestGoRefreshPolicy(t *testing.T) {
	one := 1
	s := newStream(api.Transport{Window: 64 << 10, Refresh: api.RefreshGo, Lookahead: &one})
	s.avail = 32 << 10 // the server may still send 32 KiB
	s.returnCreditLocked(1 << 10)
	if s.windowUpdates != 0 || s.unsent != 1<<10 {
		t.Fatalf("1 KiB read with 32 KiB available: %d updates, %d unsent; want 0, 1024", s.windowUpdates, s.unsent)
	}
	s.returnCreditLocked(3 << 10)
	if s.windowUpdates != 1 || s.avail != 36<<10 || s.unsent != 0 {
		t.Fatalf("4 KiB read: %d updates, avail %d, unsent %d; want 1, 36864, 0", s.windowUpdates, s.avail, s.unsent)
	}
	s.avail = 0 // window exhausted: any read refreshes
	s.returnCreditLocked(100)
	if s.windowUpdates != 2 || s.avail != 100 {
		t.Fatalf("100 B read with no window left: %d updates, avail %d; want 2, 100", s.windowUpdates, s.avail)
	}
}

// TestProfilesGolden is each transport profile's answer, on the stream
// model alone: how long the server's write, and the watcher's send, waits
// for a client reading 22 KB events (a pod with 20 KiB of annotation) at a
// steady byte rate, and whether that passes the 30 s stall timeout. The
// rates are those TestTransportGaps (test/e2e) measures real stacks at;
// docs/replay-research.md puts both side by side.
func TestProfilesGolden(t *testing.T) {
	const size = 22279 // measured by TestTransportGaps
	var b strings.Builder
	fmt.Fprintf(&b, "%-12s %-9s %-18s %-10s %-9s %s\n", "PROFILE", "WINDOW", "REFRESH", "RATE", "GAP", "PAST 30s")
	for _, p := range Profiles() {
		tr := api.Transport{Profile: p}
		if err := completeTransport(&tr, nil); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		refresh := string(tr.Refresh)
		if tr.Refresh == api.RefreshThreshold {
			refresh += fmt.Sprintf(" %dKi", tr.RefreshBytes>>10)
		}
		for _, kib := range []int{25, 50, 100} {
			rate := float64(kib<<10) / size
			got, _ := longestWriteWait(tr, size, rate, 3000)
			fmt.Fprintf(&b, "%-12s %-9s %-18s %-10s %-9s %t\n", p, fmt.Sprintf("%dKi", tr.Window>>10), refresh,
				fmt.Sprintf("%dKi/s", kib), got.Round(100*time.Millisecond), got > 30*time.Second)
		}
	}
	golden(t, "transport-profiles.txt", []byte(b.String()))
}

// TestClientStacksAnswer pins the replay column of docs/replay-research.md's client
// stacks table: each stack's longest gap unpatched, and whether pr141899
// cuts it.
func TestClientStacksAnswer(t *testing.T) {
	sc, err := Builtin("client-stacks")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), sc, []Backend{NewOurs(api.ColumnUnpatched, 0), NewOurs(api.ColumnPR141899, sc.StallTimeout.Duration)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		gap float64
		cut bool
	}{
		"client-go":       {1, false},
		"kubectl-raw":     {1, false},
		"curl-25k":        {62, true},
		"curl-50k":        {31, true},
		"curl-100k":       {16, false},
		"client-node":     {18, false},
		"client-node-2.5": {36, true},
	}
	for i, u := range res.Columns[0].Clients {
		p := res.Columns[1].Clients[i]
		w, ok := want[u.Name]
		if !ok {
			t.Errorf("unexpected client %q", u.Name)
			continue
		}
		if u.LongestNoProgressSeconds == nil || *u.LongestNoProgressSeconds != w.gap {
			t.Errorf("%s: longest gap unpatched %v, want %gs", u.Name, optSeconds(u.LongestNoProgressSeconds), w.gap)
		}
		if u.Outcome != api.OutcomeCompleted {
			t.Errorf("%s: unpatched %s, want completed", u.Name, u.Outcome)
		}
		if cut := p.Outcome == api.OutcomeStopped; cut != w.cut {
			t.Errorf("%s: pr141899 %s, want cut %t", u.Name, p.Outcome, w.cut)
		}
	}
}

// TestHTTP1ToldBehindBytesInFlight: when the stall ends a response, an
// HTTP/2 client is told at once (RST_STREAM), but an HTTP/1.1 client
// learns of the end only behind the bytes the kernel still holds for it:
// one that stopped reading is never told, one that reads is told once it
// read them all. Its handler returns, and its seat is freed, at the stall
// all the same (complete). pr141899 does not end a stalled response: its
// stopped clients are never told, their handlers stay blocked and their
// seats held; its reading client is told once its handler, woken by its
// reads, returns and it read what was in flight.
func TestHTTP1ToldBehindBytesInFlight(t *testing.T) {
	sc, err := Parse(strings.NewReader(`
name: http1-told
duration: 3m
stallTimeout: 30s
resources:
- name: pods
  objects:
  - {namespace: ns, count: 1000, bytes: 20Ki}
clients:
- {name: h2-stopped, model: stops-after 1, namespace: ns, transport: {profile: go}}
- {name: h1-stopped, model: stops-after 1, namespace: ns, transport: {profile: http1}}
- {name: h1-reading, model: paced 2.5/s, namespace: ns, transport: {profile: http1}}
`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), sc, DefaultBackends(sc, nil), Options{Timeline: true})
	if err != nil {
		t.Fatal(err)
	}
	// The reader has 2.5 events/s x 30 s = 75 events (1.5 MiB) read at
	// the stall, less than http1RefreshBytes: the server has written the
	// window, 217 whole events and part of the next, and no more.
	inFlight := int64(http1Window / (20 << 10))
	type result struct {
		outcome     api.Outcome
		told        bool
		toldAt      float64 // first step told; -1 if never
		blocked     bool
		seatSeconds float64
		events      int64
	}
	got := map[string]map[string]result{}
	for i, col := range res.Columns {
		got[col.Name] = map[string]result{}
		for j, c := range col.Clients {
			r := result{outcome: c.Outcome, told: c.ClientTold, toldAt: -1, blocked: c.HandlerBlockedInWrite, seatSeconds: c.APFSeatSeconds, events: c.EventsReceived}
			for _, st := range res.Timeline.Series[i].Clients[j].Steps {
				if st.Told {
					r.toldAt = st.AtSeconds
					break
				}
			}
			got[col.Name][c.Name] = r
		}
	}
	// complete: every handler and seat freed at the stall.
	co := got[api.ColumnComplete]
	if r := co["h2-stopped"]; r.outcome != api.OutcomeStopped || r.toldAt != 30 || r.blocked || r.seatSeconds != 30 {
		t.Errorf("complete h2-stopped: %+v, want stopped, told at 30 s (RST_STREAM), handler and seat freed then", r)
	}
	if r := co["h1-stopped"]; r.outcome != api.OutcomeStopped || r.told || r.blocked || r.seatSeconds != 30 {
		t.Errorf("complete h1-stopped: %+v, want stopped, handler and seat freed at 30 s, never told (its FIN waits behind unread bytes)", r)
	}
	r := co["h1-reading"]
	// Told the tick it reads the last whole event in flight (2.5 a second,
	// the first at t=0), not before.
	readLast := float64(inFlight)/2.5 - 1
	if r.outcome != api.OutcomeStopped || r.events != inFlight || !r.told || r.toldAt < readLast || r.toldAt > readLast+1 || r.blocked || r.seatSeconds != 30 {
		t.Errorf("complete h1-reading: %+v, want stopped, handler and seat freed at 30 s, all %d whole events in flight read and told then (t=%gs to %gs)", r, inFlight, readLast, readLast+1)
	}
	// pr141899: the stopped clients' handlers and seats held to the end,
	// nobody told while the server holds the response.
	pr := got[api.ColumnPR141899]
	for _, name := range []string{"h2-stopped", "h1-stopped"} {
		if r := pr[name]; r.outcome != api.OutcomeStopped || r.told || !r.blocked || r.seatSeconds != 180 {
			t.Errorf("pr141899 %s: %+v, want stopped, never told, handler blocked and seat held for 180 s", name, r)
		}
	}
	if r := pr["h1-reading"]; r.outcome != api.OutcomeStopped || !r.told || r.toldAt <= co["h1-reading"].toldAt || r.blocked {
		t.Errorf("pr141899 h1-reading: %+v, want stopped, told after it read what its woken handler wrote (after complete's %gs)", r, co["h1-reading"].toldAt)
	}
	// unpatched: nothing stops, nobody told.
	for name, r := range got[api.ColumnUnpatched] {
		if r.told {
			t.Errorf("unpatched %s: %+v, want never told", name, r)
		}
	}
}
