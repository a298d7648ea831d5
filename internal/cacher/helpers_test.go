package cacher

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	testingclock "k8s.io/utils/clock/testing"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// objects returns n objects of size bytes in namespace ns, resource
// versions from first.
func objects(ns string, n, size int, first uint64) []*Object {
	out := make([]*Object, n)
	for i := range out {
		out[i] = &Object{Namespace: ns, Name: fmt.Sprintf("pod-%04d", i), ResourceVersion: first + uint64(i), Size: size}
	}
	return out
}

// fixture is a Cacher on a fake clock, with a fake budget clock of its own
// as a replay gives it, and helpers that keep it deterministic: every step
// waits until the cache is quiescent.
type fixture struct {
	t      *testing.T
	clock  *testingclock.FakeClock
	budget *testingclock.FakeClock
	c      *Cacher
	rv     uint64
}

func newFixture(t *testing.T, stall time.Duration, objs []*Object) *fixture {
	t.Helper()
	return newFixtureLoop(t, stall, objs, LoopInterval)
}

// loops are the watcher loops of the releases the package models.
var loops = []Loop{LoopInterval, LoopInput}

// loopName names a loop in subtests.
func loopName(l Loop) string {
	if l == LoopInput {
		return "v1.38 loop"
	}
	return "v1.37 loop"
}

// newFixtureLoop is newFixture with the watcher loop of another release.
func newFixtureLoop(t *testing.T, stall time.Duration, objs []*Object, loop Loop) *fixture {
	t.Helper()
	clk := testingclock.NewFakeClock(epoch)
	budget := testingclock.NewFakeClock(epoch)
	rv := uint64(1)
	if len(objs) > 0 {
		rv = objs[len(objs)-1].ResourceVersion
	}
	c, err := New(Config{Resource: "pods", Clock: clk, BudgetClock: budget, StallTimeout: stall, Loop: loop, Initial: objs, InitialResourceVersion: rv})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, clock: clk, budget: budget, c: c, rv: rv}
	t.Cleanup(c.Stop)
	f.settle()
	return f
}

// settle waits until every goroutine of the cache is parked, stepping the
// budget clock to the dispatcher's budget deadline when that is all it
// waits for. The cache's own clock does not move.
func (f *fixture) settle() {
	f.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if f.c.Quiescent() {
			runtime.Gosched()
			if f.c.Quiescent() {
				if d, ok := f.c.BudgetDeadline(); ok {
					f.budget.SetTime(d)
					continue
				}
				return
			}
		}
		if time.Now().After(deadline) {
			f.t.Fatal("cache did not settle")
		}
		runtime.Gosched()
	}
}

// step moves the clock by d in one-second steps, settling after each. The
// budget clock moves by as much, so that the budget refills as time passes.
func (f *fixture) step(d time.Duration) {
	f.t.Helper()
	end := f.clock.Now().Add(d)
	for f.clock.Now().Before(end) {
		next := f.clock.Now().Add(time.Second)
		if next.After(end) {
			next = end
		}
		f.budget.Step(next.Sub(f.clock.Now()))
		f.clock.SetTime(next)
		f.settle()
	}
}

// advance moves both clocks by d at once and settles.
func (f *fixture) advance(d time.Duration) {
	f.t.Helper()
	f.budget.Step(d)
	f.clock.Step(d)
	f.settle()
}

// update modifies obj at the next resource version.
func (f *fixture) update(o *Object) *Object {
	f.t.Helper()
	f.rv++
	n := &Object{Namespace: o.Namespace, Name: o.Name, ResourceVersion: f.rv, Size: o.Size}
	if err := f.c.Apply(watch.Modified, n); err != nil {
		f.t.Fatal(err)
	}
	f.settle()
	return n
}

// consumer is a watch's request handler in a test: it receives only when
// told to, and counts its receives for Quiescent.
type consumer struct {
	t        *testing.T
	f        *fixture
	w        Watch
	received atomic.Int64
	events   []watch.Event
	closed   bool
	inited   atomic.Int64
}

func (f *fixture) watch(opts WatchOptions) *consumer {
	f.t.Helper()
	cs := &consumer{t: f.t, f: f}
	opts.Received = &cs.received
	opts.OnInitialized = func() { cs.inited.Store(f.clock.Now().Sub(epoch).Nanoseconds() + 1) }
	w, err := f.c.Watch(context.Background(), opts)
	if err != nil {
		f.t.Fatal(err)
	}
	cs.w = w
	f.t.Cleanup(w.Stop)
	f.settle()
	return cs
}

// take receives up to n events that are ready, settling in between.
func (cs *consumer) take(n int) int {
	cs.t.Helper()
	got := 0
	for got < n && !cs.closed {
		select {
		case ev, ok := <-cs.w.ResultChan():
			if !ok {
				cs.closed = true
				continue
			}
			cs.received.Add(1)
			cs.events = append(cs.events, ev)
			got++
			cs.f.settle()
		default:
			return got
		}
	}
	return got
}

func (cs *consumer) phase() Phase { return cs.w.Info().Phase }

func sendInitialEvents(b bool) *bool { return &b }
