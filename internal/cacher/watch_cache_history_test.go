package cacher

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/watch"
)

// TestHistoryCapacityAndChanSize checks the ring's growth from the
// freshness of its events and the channel size derived from it, without
// and with an indexed trigger (watch_cache_history.go:120-135, :191-212).
func TestHistoryCapacityAndChanSize(t *testing.T) {
	tests := []struct {
		name         string
		events       int
		every        time.Duration
		wantCapacity int
		// wantChanSize without and with an indexed trigger.
		wantChanSize, wantIndexed int
	}{
		{"quiet resource", 0, time.Second, 100, 10, 10},
		{"100 events a second fill the window", 7500, 10 * time.Millisecond, 12800, 100, 171},
		{"slow changes keep the lower bound", 1000, time.Second, 100, 10, 10},
		{"1000 recent events", 1000, 10 * time.Millisecond, 1600, 22, 22},
		{"a burst then quiet: shrinks back", 3200, 0, 100, 10, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHistory(DefaultEventFreshDuration)
			now := epoch
			for i := 0; i < tt.events; i++ {
				now = now.Add(tt.every)
				h.addLocked(&watchCacheEvent{Type: watch.Modified, ResourceVersion: uint64(i + 1), RecordTime: now})
			}
			if tt.every == 0 {
				// Then one event every 10 minutes: the ring halves each
				// time its newest quarter is older than the window.
				for i := 0; i < 400; i++ {
					now = now.Add(10 * time.Minute)
					h.addLocked(&watchCacheEvent{Type: watch.Modified, ResourceVersion: uint64(tt.events + i + 1), RecordTime: now})
				}
			}
			got := []int{h.capacity, h.chanSizeLocked(false), h.chanSizeLocked(true)}
			if diff := cmp.Diff([]int{tt.wantCapacity, tt.wantChanSize, tt.wantIndexed}, got); diff != "" {
				t.Errorf("capacity, chan size, chan size with an indexed trigger (-want +got):\n%s", diff)
			}
			for i := h.start; i < h.end-1; i++ {
				if h.atLocked(i).ResourceVersion+1 != h.atLocked(i+1).ResourceVersion {
					t.Fatalf("ring out of order at #%d after resizing", i)
				}
			}
		})
	}
}

// TestCapacityUpperBound checks the ceiling of the ring against the
// freshness window: doubled per doubling of the window, rounded up, capped
// so that it fits an int32.
func TestCapacityUpperBound(t *testing.T) {
	tests := []struct {
		freshness time.Duration
		want      int
	}{
		{DefaultEventFreshDuration, 100 * 1024},
		{DefaultEventFreshDuration + time.Second, 200 * 1024},
		{2 * DefaultEventFreshDuration, 200 * 1024},
		{3 * DefaultEventFreshDuration, 400 * 1024},
		{1 << 14 * DefaultEventFreshDuration, 100 * 1024 << 14},
		{1 << 20 * DefaultEventFreshDuration, 100 * 1024 << 14},
		{math.MaxInt64, 100 * 1024 << 14},
	}
	for _, tt := range tests {
		if got := capacityUpperBound(tt.freshness); got != tt.want || got > math.MaxInt32 {
			t.Errorf("capacityUpperBound(%v) = %d, want %d", tt.freshness, got, tt.want)
		}
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
		{rv: 1249, first: 0}, // nothing newer: the end of the ring
	}
	for _, tt := range tests {
		i, err := h.firstAfterLocked(tt.rv, 999)
		if !errors.Is(err, tt.wantErr) {
			t.Errorf("rv %d: error %v, want %v", tt.rv, err, tt.wantErr)
			continue
		}
		switch {
		case err != nil:
		case tt.first == 0 && i != h.end:
			t.Errorf("rv %d: index %d, want the end of the ring %d", tt.rv, i, h.end)
		case tt.first != 0 && h.atLocked(i).ResourceVersion != tt.first:
			t.Errorf("rv %d: first event %d, want %d", tt.rv, h.atLocked(i).ResourceVersion, tt.first)
		}
	}
	// A ring that never dropped an event since the list serves from the
	// list on, whatever it holds; an empty one never loaded serves nothing.
	fresh := newHistory(DefaultEventFreshDuration)
	if i, err := fresh.firstAfterLocked(999, 999); err != nil || i != fresh.end {
		t.Errorf("fresh ring after a list at 999: index %d, error %v; want its end and no error", i, err)
	}
	if _, err := fresh.firstAfterLocked(998, 999); !errors.Is(err, ErrResourceExpired) {
		t.Errorf("fresh ring, from before the list: error %v, want %v", err, ErrResourceExpired)
	}
	if _, err := fresh.firstAfterLocked(5, 0); !errors.Is(err, errHistoryUnset) {
		t.Errorf("empty ring and no list: error %v, want %v", err, errHistoryUnset)
	}
}
