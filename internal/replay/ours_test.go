package replay

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/cacher"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"k8s.io/apimachinery/pkg/watch"
	testingclock "k8s.io/utils/clock/testing"
)

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

func TestOursColumns(t *testing.T) {
	if got := NewOurs(api.ColumnUnpatched, 0).Name(); got != api.ColumnUnpatched {
		t.Errorf("NewOurs name %q", got)
	}
	c := NewOursComplete(30 * time.Second)
	if c.Name() != api.ColumnComplete || !c.endStream || c.stallTimeout != 30*time.Second {
		t.Errorf("NewOursComplete = %q, endStream %v, stall %v", c.Name(), c.endStream, c.stallTimeout)
	}
	// A cache that cannot start is an error naming the column and resource.
	o := NewOurs("bad", -time.Second)
	err := o.Start([]ResourceState{{Name: "pods"}}, testingclock.NewFakeClock(time.Unix(0, 0)))
	if err == nil || err.Error() != `starting the bad cache of "pods": stall timeout -1s must not be negative` {
		t.Errorf("Start with a negative stall timeout: %v", err)
	}
}
