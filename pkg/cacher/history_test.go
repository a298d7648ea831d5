package cacher

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/watch"
)

// TestHistoryCapacityAndChanSize checks the ring's growth from the
// freshness of its events and the channel size derived from it
// (watch_cache_history.go:120-135, :191-212).
func TestHistoryCapacityAndChanSize(t *testing.T) {
	tests := []struct {
		name         string
		events       int
		every        time.Duration
		wantCapacity int
		wantChanSize int
	}{
		{"quiet resource", 0, time.Second, 100, 10},
		{"100 events a second fill the window", 7500, 10 * time.Millisecond, 12800, 100},
		{"slow changes keep the lower bound", 1000, time.Second, 100, 10},
		{"1000 recent events", 1000, 10 * time.Millisecond, 1600, 22},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHistory(DefaultEventFreshDuration)
			now := epoch
			for i := 0; i < tt.events; i++ {
				now = now.Add(tt.every)
				h.addLocked(&watchCacheEvent{Type: watch.Modified, ResourceVersion: uint64(i + 1), RecordTime: now})
			}
			got := []int{h.capacity, h.chanSizeLocked()}
			if diff := cmp.Diff([]int{tt.wantCapacity, tt.wantChanSize}, got); diff != "" {
				t.Errorf("capacity, chan size (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHistoryInterval checks where a watch from a resource version starts.
func TestHistoryInterval(t *testing.T) {
	h := newHistory(DefaultEventFreshDuration)
	for i := 0; i < 250; i++ { // overflows the 100 slots of a slow ring
		h.addLocked(&watchCacheEvent{Type: watch.Modified, ResourceVersion: uint64(1000 + i), RecordTime: epoch.Add(time.Duration(i) * time.Minute)})
	}
	tests := []struct {
		rv      uint64
		first   uint64
		wantErr error
	}{
		{rv: 1200, first: 1201},
		{rv: 1149, first: 1150},
		{rv: 1100, wantErr: ErrResourceExpired},
	}
	for _, tt := range tests {
		i, err := h.firstAfterLocked(tt.rv, 999)
		if !errors.Is(err, tt.wantErr) {
			t.Errorf("rv %d: error %v, want %v", tt.rv, err, tt.wantErr)
			continue
		}
		if err == nil && h.atLocked(i).ResourceVersion != tt.first {
			t.Errorf("rv %d: first event %d, want %d", tt.rv, h.atLocked(i).ResourceVersion, tt.first)
		}
	}
}

// TestTimeBudget checks the dispatcher's budget: 50 ms per second, capped
// at 100 ms, unused time returned.
func TestTimeBudget(t *testing.T) {
	f := newFixture(t, 0, nil)
	b := newTimeBudget(f.clock)
	steps := []struct {
		advance time.Duration
		give    time.Duration
		want    time.Duration
	}{
		{0, 0, 0},
		{time.Second, 0, 50 * time.Millisecond},
		{10 * time.Second, 30 * time.Millisecond, 100 * time.Millisecond},
		{0, 0, 30 * time.Millisecond},
	}
	for i, s := range steps {
		f.clock.Step(s.advance)
		got := b.takeAvailable()
		if got != s.want {
			t.Errorf("step %d: took %v, want %v", i, got, s.want)
		}
		b.returnUnused(s.give)
	}
}
