package metrics

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// FuzzExtract feeds arbitrary exposition text through Parse, Extract and
// Rates: none may panic, Parse either fails or yields families, and no rate
// is negative.
func FuzzExtract(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "parse", "*"))
	seeds = append(seeds, filepath.Join("testdata", "golden", "apiserver-v0.37.2-collectors.prom"))
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	if b, err := os.ReadFile(filepath.Join(captures, "t1", "metrics.txt")); err == nil {
		f.Add(b[:8<<10]) // a head of the real capture, cut mid-family
	}
	for _, ri := range releases {
		f.Add(exposeRelease(f, ri.Release, map[MetricID]float64{
			Watchers: 1, InitEvents: 2, TerminatedWatchers: 3, WatchEvents: 4, WatchEventSizes: 5,
			CacheEventsReceived: 6, CacheEventsDispatched: 7, CacheCapacity: 8, LimitSeats: 9, ExecutingSeats: 10,
		}))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parser{MaxBytes: 1 << 20}.Parse(bytes.NewReader(data), "fuzz")
		if err != nil {
			if s != nil {
				t.Fatalf("Parse returned a sample with error %v", err)
			}
			return
		}
		if len(s.FamilyNames()) == 0 {
			t.Fatal("Parse succeeded without families")
		}
		snap := Extract(s)
		if !sort.SliceIsSorted(snap.PriorityLevels, func(i, j int) bool { return snap.PriorityLevels[i].Name < snap.PriorityLevels[j].Name }) {
			t.Errorf("priority levels not sorted")
		}
		for _, r := range []Release{{1, 30}, {1, 34}, {1, 99}} {
			ExtractRelease(s, r)
		}
		for k, bs := range EventSizeBuckets(s) {
			if !sort.SliceIsSorted(bs, func(i, j int) bool { return bs[i].UpperBound < bs[j].UpperBound }) || len(bs) == 0 || !math.IsInf(bs[len(bs)-1].UpperBound, 1) {
				t.Errorf("event size buckets of %s: %v, want sorted and ending at +Inf", k, bs)
			}
		}
		WatchRequests(s)
		rs, err := Rates(snap, snap, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs.Resources {
			for _, v := range []float64{r.InitEventsPerSecond, r.TerminatedWatchersPerSecond, r.EventsReceivedPerSecond,
				r.EventsDispatchedPerSecond, r.CacheInitializationsPerSecond, r.WatchEventsPerSecond,
				r.WatchEventBytesPerSecond, r.WatchListsPerSecond} {
				if v < 0 {
					t.Fatalf("negative rate %v for %s", v, r.Current.Name())
				}
			}
		}
	})
}
