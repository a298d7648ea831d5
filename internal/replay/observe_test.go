package replay

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// endedHandler returns a handler whose request returned at endAt, or one
// still serving when endAt is zero.
func endedHandler(endAt time.Time) *handler {
	h := &handler{exited: make(chan struct{}), endAt: endAt}
	if !endAt.IsZero() {
		close(h.exited)
	}
	return h
}

func TestAPFSeatSeconds(t *testing.T) {
	at := func(s int) time.Time { return Epoch().Add(time.Duration(s) * time.Second) }
	end := at(100)
	tests := []struct {
		name        string
		start       time.Duration
		seats       int
		initialized time.Time
		handlerEnd  time.Time
		want        float64
	}{
		{name: "held to the end", start: 10 * time.Second, seats: 1, want: 90},
		{name: "seats multiply", start: 10 * time.Second, seats: 3, want: 270},
		{name: "released when initialized", start: 10 * time.Second, seats: 2, initialized: at(40), want: 60},
		{name: "released when the handler returned first", start: 10 * time.Second, seats: 1, initialized: at(40), handlerEnd: at(20), want: 10},
		{name: "handler returned after initialization", start: 10 * time.Second, seats: 1, initialized: at(40), handlerEnd: at(60), want: 30},
		{name: "started at the end", start: 100 * time.Second, seats: 1, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &clientRun{spec: &Client{Seats: tt.seats}, start: tt.start, watchStart: tt.start, h: endedHandler(tt.handlerEnd)}
			if !tt.initialized.IsZero() {
				r.initializedAt.Store(tt.initialized.UnixNano())
			}
			if got := apfSeatSeconds(r, end); got != tt.want {
				t.Errorf("apfSeatSeconds = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestObserveOutcome(t *testing.T) {
	d := func(s int) *time.Duration { v := time.Duration(s) * time.Second; return &v }
	tests := []struct {
		name  string
		run   *clientRun
		wg    WatcherGoroutine
		alive bool
		want  api.ClientResult
	}{
		{
			name: "disconnect comes first",
			run:  &clientRun{disconnectedAt: d(5), stoppedAt: d(7), initialDone: d(1)},
			want: api.ClientResult{Outcome: api.OutcomeDisconnected, DisconnectedAtSeconds: ptr(5.0)},
		},
		{
			name: "stopped, after its start",
			run:  &clientRun{start: 2 * time.Second, watchStart: 2 * time.Second, stoppedAt: d(7)},
			wg:   WatcherGoroutine{Blocked: true}, alive: true,
			want: api.ClientResult{Outcome: api.OutcomeStopped, StoppedAtSeconds: ptr(7.0), StoppedAfterSeconds: ptr(5.0)},
		},
		{
			name: "stopped, after the start of its last watch",
			run:  &clientRun{start: 2 * time.Second, watchStart: 40 * time.Second, stoppedAt: d(47)},
			want: api.ClientResult{Outcome: api.OutcomeStopped, StoppedAtSeconds: ptr(47.0), StoppedAfterSeconds: ptr(7.0)},
		},
		{
			name: "watcher blocked streaming",
			run:  &clientRun{initialDone: d(1)},
			wg:   WatcherGoroutine{Blocked: true, Phase: "streaming"}, alive: true,
			want: api.ClientResult{Outcome: api.OutcomeBlocked},
		},
		{
			name: "a blocked watcher that is gone is not blocked",
			run:  &clientRun{initialDone: d(1)},
			wg:   WatcherGoroutine{Blocked: true},
			want: api.ClientResult{Outcome: api.OutcomeCompleted},
		},
		{
			name: "initial events never done",
			run:  &clientRun{},
			want: api.ClientResult{Outcome: api.OutcomeBlocked},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got api.ClientResult
			held := map[*worldResource]map[versionKey]int{}
			observeOutcome(&got, tt.run, tt.wg, tt.alive, held)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("observeOutcome (-want +got):\n%s", diff)
			}
			if len(held) != 0 {
				t.Errorf("held = %v, want nothing held outside initial events", held)
			}
		})
	}
}

func TestObserveGoroutines(t *testing.T) {
	tests := []struct {
		name           string
		wg             WatcherGoroutine
		alive          bool
		blockedInWrite bool
		handlerEnd     time.Time
		want           api.Column
		wantBlocked    bool
	}{
		{name: "gone", want: api.Column{}},
		{name: "alive", alive: true, want: api.Column{WatcherGoroutines: 1}},
		{name: "blocked, handler writing", wg: WatcherGoroutine{Blocked: true}, alive: true, blockedInWrite: true,
			want: api.Column{WatcherGoroutines: 1, BlockedGoroutines: 1, HandlersBlockedInWrite: 1}, wantBlocked: true},
		{name: "a returned handler is not writing", blockedInWrite: true, handlerEnd: Epoch(), want: api.Column{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var col api.Column
			var cr api.ClientResult
			r := &clientRun{h: endedHandler(tt.handlerEnd)}
			r.h.st = &stream{}
			observeGoroutines(&col, &cr, r, tt.wg, tt.alive, tt.blockedInWrite)
			if diff := cmp.Diff(tt.want, col); diff != "" {
				t.Errorf("column (-want +got):\n%s", diff)
			}
			if cr.HandlerBlockedInWrite != tt.wantBlocked {
				t.Errorf("HandlerBlockedInWrite = %v, want %v", cr.HandlerBlockedInWrite, tt.wantBlocked)
			}
		})
	}
}

func TestClientResultOf(t *testing.T) {
	tr := api.Transport{Profile: "nghttp2"}
	r := &clientRun{
		spec:  &Client{Namespace: "ns1", Transport: &tr},
		name:  "c-2",
		model: Model{Kind: ModelHealthy},
		start: 3 * time.Second, events: 7, marks: 2, expected: 5,
	}
	want := api.ClientResult{
		Name: "c-2", Model: "healthy", Scope: "namespace ns1",
		EventsReceived: 7, BookmarksReceived: 2, InitialEvents: 5, StartSeconds: 3, Transport: &api.Transport{Profile: "nghttp2"},
	}
	got := clientResultOf(r)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("clientResultOf (-want +got):\n%s", diff)
	}
	if got.Transport == r.spec.Transport {
		t.Error("clientResultOf shares the scenario's transport string; want a copy")
	}
	if s := scopeOf(""); s != "cluster" {
		t.Errorf(`scopeOf("") = %q, want "cluster"`, s)
	}
}
