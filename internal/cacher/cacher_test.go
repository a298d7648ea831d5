package cacher

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"
)

// TestApplyAfterStop: a stopped Cacher refuses changes with ErrStopped,
// not ErrBackpressure (which would ask a driver to retry forever), even
// with its queue full.
func TestApplyAfterStop(t *testing.T) {
	f := newFixture(t, 0, objects("ns", 1, 10, 100))
	f.c.Stop()
	for i := 0; i < incomingBufferSize+5; i++ {
		err := f.c.Apply(watch.Modified, &Object{Namespace: "ns", Name: "pod-0000", ResourceVersion: uint64(200 + i), Size: 10})
		if !errors.Is(err, ErrStopped) {
			t.Fatalf("Apply #%d after Stop: %v, want %v", i, err, ErrStopped)
		}
	}
}

// TestApplyConcurrent: callers racing on Apply never block (each gets nil,
// ErrBackpressure, or a refusal of a change that lost the race to a newer
// one), and every accepted change is dispatched. Run with -race.
func TestApplyConcurrent(t *testing.T) {
	f := newFixture(t, 0, objects("ns", 1, 10, 100))
	var (
		rv       atomic.Uint64
		accepted atomic.Int64
		wg       sync.WaitGroup
	)
	rv.Store(1000)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				err := f.c.Apply(watch.Modified, &Object{Namespace: "ns", Name: "pod-0000", ResourceVersion: rv.Add(1), Size: 10})
				switch {
				case err == nil:
					accepted.Add(1)
				case errors.Is(err, ErrBackpressure), errors.Is(err, errNotNewer):
				default:
					t.Errorf("Apply: %v", err)
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("an Apply blocked")
	}
	f.settle()
	if got := f.c.consumed.Load(); got != accepted.Load() || got == 0 {
		t.Errorf("%d changes dispatched, %d accepted", got, accepted.Load())
	}
}
