package replay

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/watch"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/cacher"
	"github.com/watch-doctor/watch-doctor/internal/english"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// TestRequestEnds covers the ways a request ends from the client's side:
// a client that disconnects frees its watcher in every column; a request
// timeout frees it only when the handler is between two writes, as the
// API server's handler only watches its timeout there
// (endpoints/handlers/watch.go:423-441): a handler blocked writing to a
// client that stopped reading never sees it.
func TestRequestEnds(t *testing.T) {
	sc, err := Parse(strings.NewReader(`
name: request-ends
duration: 3m
resources:
- name: pods
  objects:
  - {namespace: ns, count: 400, bytes: 20Ki}
clients:
- name: leaves
  model: disconnects-after 30s
  namespace: ns
- name: stuck-with-timeout
  model: stops-after 1
  namespace: ns
  timeout: 60s
- name: healthy-with-timeout
  model: healthy
  namespace: ns
  timeout: 60s
`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), sc, []Backend{NewOurs(api.ColumnUnpatched, 0)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range res.Columns[0].Clients {
		s := c.Name + "=" + string(c.Outcome)
		if c.DisconnectedAtSeconds != nil {
			s += "@" + english.Number(*c.DisconnectedAtSeconds)
		}
		got = append(got, s)
	}
	want := []string{"leaves=disconnected@30", "stuck-with-timeout=blocked", "healthy-with-timeout=disconnected@60"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if n := res.Columns[0].WatcherGoroutines; n != 1 {
		t.Errorf("watcher goroutines alive at the end: %d, want 1 (the stuck one)", n)
	}
}

// TestHealthyClientsKeepUp: clients that read everything complete at 11,
// 20 and 60 changes a second, in internal/cacher's columns (the differential
// suite compares upstream with them at up to 20), because they read between the
// changes of a tick. With all of a tick's changes delivered before any
// read, every client whose snapshot (3.2 MiB here) is larger than its
// flow-control window (256 KiB) was still in its initial events when they
// came, overflowed its 10-slot input at 11 changes a second or more, and
// was closed at its start tick. A client whose window holds only four
// events reads whenever its handler waits for credit, so that 60 changes a
// second do not overflow it either. A client that stops reading is still
// closed.
func TestHealthyClientsKeepUp(t *testing.T) {
	for _, rate := range []int{11, 20, 60} {
		sc, err := Parse(strings.NewReader(fmt.Sprintf(`
name: fast-changes
duration: 12s
transport: {window: 256Ki}
resources:
- name: pods
  objects:
  - {namespace: a, count: 400, bytes: 4Ki}
  - {namespace: b, count: 400, bytes: 4Ki}
  updates:
  - perSecond: %d
clients:
- {name: lister, count: 6, model: healthy, every: 1s}
- {name: legacy, count: 2, model: healthy, initialEvents: legacy-rv0, every: 3s}
- {name: small-window, model: healthy, namespace: a, startAt: 2s, transport: {window: 16Ki}}
- {name: stuck, model: stops-after 100, startAt: 1s, transport: {window: 64Ki}}
`, rate)))
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(context.Background(), sc, DefaultBackends(sc, nil), Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, col := range res.Columns {
			var terminated int64
			for _, c := range col.Counters {
				terminated += c.TerminatedWatchers
			}
			for _, c := range col.Clients {
				want := api.OutcomeCompleted
				if c.Name == "stuck" {
					continue
				}
				if c.Outcome != want {
					t.Errorf("%d changes/s, %s: %s %s, want %s", rate, col.Name, c.Name, describe(c), want)
				}
			}
			if stuck := col.Clients[len(col.Clients)-1]; stuck.Outcome == api.OutcomeCompleted || terminated != 1 {
				t.Errorf("%d changes/s, %s: stuck %s, %d closed by the dispatcher; want it ended and 1 closed", rate, col.Name, describe(stuck), terminated)
			}
		}
	}
}

// stoppingBackend stops its backend at the first change: every Apply after
// is refused with cacher.ErrStopped.
type stoppingBackend struct {
	Backend
	applies int
}

func (b *stoppingBackend) Apply(resource string, t watch.EventType, o *cacher.Object) error {
	b.applies++
	b.Backend.Stop()
	return b.Backend.Apply(resource, t, o)
}

// TestApplyToStoppedCache: a backend whose cache is stopped ends the
// replay with the error at once; the driver does not retry it as it does
// a full queue.
func TestApplyToStoppedCache(t *testing.T) {
	sc, err := Parse(strings.NewReader(`
name: stopped
duration: 10s
resources:
- name: pods
  objects: [{namespace: ns, count: 5, bytes: 1Ki}]
  updates: [{perSecond: 1}]
clients: [{name: c, model: healthy}]
`))
	if err != nil {
		t.Fatal(err)
	}
	b := &stoppingBackend{Backend: NewOurs(api.ColumnUnpatched, 0)}
	_, err = Run(context.Background(), sc, []Backend{b}, Options{})
	if !errors.Is(err, cacher.ErrStopped) {
		t.Fatalf("Run: %v, want an error wrapping %v", err, cacher.ErrStopped)
	}
	if b.applies != 1 {
		t.Errorf("%d applies, want 1: no retry", b.applies)
	}
}

// TestBudgetLeavesReplayClock: when the dispatcher waits out its time
// budget on a watcher whose input is full, Settle steps the backend's
// budget clock; the replay clock, which every other timer and timestamp
// uses, does not move.
func TestBudgetLeavesReplayClock(t *testing.T) {
	clk := testingclock.NewFakeClock(Epoch())
	o := NewOurs(api.ColumnUnpatched, 0)
	objs := []*cacher.Object{{Namespace: "ns", Name: "a", ResourceVersion: 100, Size: 10}}
	if err := o.Start([]ResourceState{{Name: "pods", Objects: objs, ResourceVersion: 100}}, clk); err != nil {
		t.Fatal(err)
	}
	defer o.Stop()
	ctx := context.Background()
	all := func() bool { return true }
	no := false
	var received atomic.Int64
	w, err := o.Watch(ctx, WatchRequest{Resource: "pods", Namespace: "ns", SendInitialEvents: &no, Received: &received})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := o.Settle(ctx, all); err != nil {
		t.Fatal(err)
	}
	clk.Step(10 * time.Second) // some budget to wait with
	// Nobody reads: 10 changes fill result, 10 the input, the next one
	// makes the dispatcher wait out its budget and close the watcher.
	for rv := uint64(101); rv <= 125; rv++ {
		if err := o.Apply("pods", watch.Modified, &cacher.Object{Namespace: "ns", Name: "a", ResourceVersion: rv, Size: 10}); err != nil {
			t.Fatal(err)
		}
		if err := o.Settle(ctx, all); err != nil {
			t.Fatal(err)
		}
		if got := clk.Now(); !got.Equal(Epoch().Add(10 * time.Second)) {
			t.Fatalf("after change %d the replay clock reads %v, want %v", rv, got, Epoch().Add(10*time.Second))
		}
	}
	if got := o.Counters()[0].TerminatedWatchers; got != 1 {
		t.Errorf("%d watchers closed by the dispatcher, want 1", got)
	}
	if got, want := o.budget.Now(), Epoch().Add(10*time.Second+100*time.Millisecond); !got.Equal(want) {
		t.Errorf("budget clock at %v, want %v (the replay's 10 s, then the full 100 ms budget waited)", got, want)
	}
}
