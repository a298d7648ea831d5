package replay

import (
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
