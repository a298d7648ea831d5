package cacher

import (
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	testingclock "k8s.io/utils/clock/testing"
)

func historyCache(t *testing.T, clk *testingclock.FakeClock, n int, every time.Duration) *watchCache {
	t.Helper()
	w := newWatchCache(clk, DefaultEventFreshDuration)
	w.replace(nil, 999)
	addEvents(t, w, clk, n, every)
	return w
}

func addEvents(t *testing.T, w *watchCache, clk *testingclock.FakeClock, n int, every time.Duration) {
	t.Helper()
	for range n {
		clk.Step(every)
		if _, err := w.processEvent(watch.Modified, &Object{Namespace: "ns", Name: "a", ResourceVersion: w.resourceVersion() + 1}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHistoryIntervalCopiesInBatches: more events than one batch
// (intervalBufferSize) come out whole and in order.
func TestHistoryIntervalCopiesInBatches(t *testing.T) {
	clk := testingclock.NewFakeClock(epoch)
	n := intervalBufferSize + intervalBufferSize/2
	w := historyCache(t, clk, n, time.Millisecond)
	w.RLock()
	i, err := w.intervalLocked(999, nil)
	w.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
	want := uint64(1000)
	for {
		e, err := i.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			break
		}
		if e.ResourceVersion != want {
			t.Fatalf("event at %d, want %d", e.ResourceVersion, want)
		}
		want++
	}
	if got := want - 1000; got != uint64(n) {
		t.Errorf("%d events, want %d", got, n)
	}
}

// TestHistoryIntervalOverwritten: an interval whose events the ring
// dropped before it copied them ends with errIntervalOverwritten, never a
// silent gap.
func TestHistoryIntervalOverwritten(t *testing.T) {
	clk := testingclock.NewFakeClock(epoch)
	w := historyCache(t, clk, 1, time.Minute)
	w.RLock()
	i, err := w.intervalLocked(999, nil)
	w.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
	addEvents(t, w, clk, 250, time.Minute) // overflows a slow ring
	e, err := i.Next()
	if !errors.Is(err, errIntervalOverwritten) || e != nil {
		t.Errorf("Next() = %+v, %v; want %v", e, err, errIntervalOverwritten)
	}
}
