package replay

import (
	"context"
	"strings"
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

// TestReleaseLoops replays the 1.38 built-in quiet-and-busy in 1.38's
// watcher loop (its release) and in 1.37's: every column must come out the
// same on every figure CompareColumns compares (measured so on real
// patched and unpatched v1.37.2 and v1.38.0-beta.0 servers, test/e2e
// TestBlockedReplayQuietAndBusy and TestPatchedBlockedReplay), and only the
// 1.38 columns name their release.
func TestReleaseLoops(t *testing.T) {
	sc138, err := Builtin("quiet-and-busy")
	if err != nil {
		t.Fatal(err)
	}
	if sc138.ModelRelease() != ReleaseV138 {
		t.Fatalf("quiet-and-busy models %s, want %s", sc138.ModelRelease(), ReleaseV138)
	}
	sc137 := *sc138
	sc137.Release = ""
	r138, err := Run(context.Background(), sc138, DefaultBackends(sc138, nil), Options{})
	if err != nil {
		t.Fatal(err)
	}
	r137, err := Run(context.Background(), &sc137, DefaultBackends(&sc137, nil), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range r138.Columns {
		a, b := &r138.Columns[i], &r137.Columns[i]
		if a.Release != ReleaseV138 || b.Release != "" {
			t.Errorf("%s: releases %q and %q, want %q and none", a.Name, a.Release, b.Release, ReleaseV138)
		}
		if diffs := CompareColumns(a, b); len(diffs) > 0 {
			t.Errorf("%s: the 1.38 and 1.37 loops differ:\n  %s", a.Name, strings.Join(diffs, "\n  "))
		}
	}
}
