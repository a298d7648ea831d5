package cacher_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/cacher"
)

// A watch that asks for initial events and then stops reading: without the
// stall timeout its goroutine stays blocked; with it, it is stopped 30
// virtual seconds after its last successful send.
func Example() {
	for _, stall := range []time.Duration{0, 30 * time.Second} {
		clk := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		var objs []*cacher.Object
		for i := 0; i < 50; i++ {
			objs = append(objs, &cacher.Object{Namespace: "rand2", Name: fmt.Sprintf("pod-%d", i), ResourceVersion: uint64(100 + i), Size: 20 << 10})
		}
		c, err := cacher.New(cacher.Config{Resource: "pods", Clock: clk, StallTimeout: stall, Initial: objs, InitialResourceVersion: 149})
		if err != nil {
			panic(err)
		}
		var received atomic.Int64
		yes := true
		w, err := c.Watch(context.Background(), cacher.WatchOptions{
			Namespace: "rand2", ResourceVersion: "0", SendInitialEvents: &yes, AllowWatchBookmarks: true, Received: &received,
		})
		if err != nil {
			panic(err)
		}
		// Wait until every goroutine of the cache is parked; a bug that
		// keeps one running fails the example instead of hanging it.
		settle := func() {
			for spins := 0; !c.Quiescent(); spins++ {
				if spins == 1e7 {
					panic("the cache did not settle")
				}
				runtime.Gosched()
			}
		}
		settle()
		<-w.ResultChan() // the client reads one event, then nothing
		received.Add(1)
		settle()
		for i := 0; i < 60; i++ {
			clk.Step(time.Second)
			settle()
		}
		info := w.Info()
		fmt.Printf("stall timeout %v: phase %s, %d sent, stalled %v, stopped by the timeout: %d\n",
			stall, info.Phase, info.Sent, info.Stalled, c.Counters().StalledWatchers)
		w.Stop()
		c.Stop()
	}
	// Output:
	// stall timeout 0s: phase initial, 11 sent, stalled false, stopped by the timeout: 0
	// stall timeout 30s: phase done, 11 sent, stalled true, stopped by the timeout: 1
}
