package metrics

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func snapWith(start float64, at time.Time, rows ...Resource) *Snapshot {
	return &Snapshot{Source: "s", CapturedAt: at, ProcessStartTime: start, Goroutines: nan, ResidentMemoryBytes: nan, Resources: rows}
}

// row returns pods with every value absent but the ones set by f.
func row(f func(r *Resource)) Resource {
	r := Resource{Resource: "pods"}
	setNaN(&r)
	f(&r)
	return r
}

func TestRates(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	start := float64(t0.Add(-time.Hour).Unix())
	tests := []struct {
		name          string
		first, second *Snapshot
		interval      time.Duration
		// want is the pods row's init events rate and watchers change.
		wantInit      float64
		wantWatchers  float64
		wantRestarted bool
		wantNotes     []string
		wantErr       error
	}{
		{
			name:         "steady",
			first:        snapWith(start, t0, row(func(r *Resource) { r.InitEvents, r.Watchers = 100, 3 })),
			second:       snapWith(start, t0.Add(10*time.Second), row(func(r *Resource) { r.InitEvents, r.Watchers = 150, 4 })),
			wantInit:     5,
			wantWatchers: 1,
		},
		{
			name:         "interval given wins over capture times",
			first:        snapWith(start, t0, row(func(r *Resource) { r.InitEvents = 100 })),
			second:       snapWith(start, t0.Add(10*time.Second), row(func(r *Resource) { r.InitEvents = 150 })),
			interval:     25 * time.Second,
			wantInit:     2,
			wantWatchers: math.NaN(),
		},
		{
			name:         "counter went down without a restart: not measured",
			first:        snapWith(start, t0, row(func(r *Resource) { r.InitEvents = 500 })),
			second:       snapWith(start, t0.Add(10*time.Second), row(func(r *Resource) { r.InitEvents = 30 })),
			wantInit:     math.NaN(),
			wantWatchers: math.NaN(),
			wantNotes:    []string{"apiserver_init_events_total went down for 1 resources with no restart of the server: not measured, because a counter of one process never goes down"},
		},
		{
			name:  "restart: counters start again even when they grew past the old value",
			first: snapWith(start, t0, row(func(r *Resource) { r.InitEvents, r.Watchers = 100, 3 })),
			// restarted 4 s before the second sample, counter already at 120
			second:        snapWith(float64(t0.Add(6*time.Second).Unix()), t0.Add(10*time.Second), row(func(r *Resource) { r.InitEvents, r.Watchers = 120, 1 })),
			wantInit:      30,
			wantWatchers:  math.NaN(),
			wantRestarted: true,
			wantNotes:     []string{"the API server restarted between the samples (process_start_time_seconds 2026-11-29T09:00:00Z -> 2026-11-29T10:00:06Z): counters restarted from 0, rates count from the restart (4s before the second sample)"},
		},
		{
			name:         "series new in the second sample starts from 0",
			first:        snapWith(start, t0, row(func(r *Resource) {})),
			second:       snapWith(start, t0.Add(10*time.Second), row(func(r *Resource) { r.InitEvents = 20 })),
			wantInit:     2,
			wantWatchers: math.NaN(),
		},
		{
			name:         "absent in the second sample: no rate",
			first:        snapWith(start, t0, row(func(r *Resource) { r.InitEvents = 20 })),
			second:       snapWith(start, t0.Add(10*time.Second), row(func(r *Resource) {})),
			wantInit:     math.NaN(),
			wantWatchers: math.NaN(),
		},
		{
			name:         "hostile negative counter never gives a negative rate",
			first:        snapWith(start, t0, row(func(r *Resource) { r.InitEvents = 5 })),
			second:       snapWith(start, t0.Add(10*time.Second), row(func(r *Resource) { r.InitEvents = -50 })),
			wantInit:     math.NaN(),
			wantWatchers: math.NaN(),
			wantNotes:    []string{"apiserver_init_events_total went down for 1 resources with no restart of the server: not measured, because a counter of one process never goes down"},
		},
		{
			name:    "no interval and no capture times",
			first:   snapWith(start, time.Time{}, row(func(r *Resource) {})),
			second:  snapWith(start, time.Time{}, row(func(r *Resource) {})),
			wantErr: ErrNoInterval,
		},
		{
			name:    "second captured before the first",
			first:   snapWith(start, t0.Add(time.Minute), row(func(r *Resource) {})),
			second:  snapWith(start, t0, row(func(r *Resource) {})),
			wantErr: ErrNoInterval,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs, err := Rates(tt.first, tt.second, tt.interval)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("error = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := rs.Resources[0]
			nan := cmpopts.EquateNaNs()
			if diff := cmp.Diff(tt.wantInit, got.InitEventsPerSecond, nan); diff != "" {
				t.Errorf("init events/s (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantWatchers, got.WatchersChange, nan); diff != "" {
				t.Errorf("watchers change (-want +got):\n%s", diff)
			}
			if rs.Restarted != tt.wantRestarted {
				t.Errorf("restarted = %v, want %v", rs.Restarted, tt.wantRestarted)
			}
			if diff := cmp.Diff(tt.wantNotes, rs.Notes); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
			for _, v := range []float64{got.InitEventsPerSecond, got.TerminatedWatchersPerSecond, got.EventsReceivedPerSecond,
				got.EventsDispatchedPerSecond, got.CacheInitializationsPerSecond, got.WatchEventsPerSecond,
				got.WatchEventBytesPerSecond, got.WatchListsPerSecond} {
				if v < 0 {
					t.Errorf("negative rate %v in %+v", v, got)
				}
			}
		})
	}
}
