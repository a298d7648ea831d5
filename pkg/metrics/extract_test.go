package metrics

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// exposeRelease builds, for one release, the exposition a kube-apiserver of
// that release would produce: every catalog family with the name, type,
// labels and stability read from that release's source (testdata/upstream),
// registered in a client_golang registry and written by expfmt. values gives
// the value set for each metric on the resource deployments.apps (and on
// priority level global-default).
func exposeRelease(t testing.TB, rel Release, values map[MetricID]float64) []byte {
	t.Helper()
	facts := readFacts(t, factsFile(rel))
	reg := prometheus.NewRegistry()
	for _, m := range catalog {
		val, ok := values[m.ID]
		if !ok {
			continue
		}
		for _, v := range m.VariantsIn(rel) {
			if v.Scheme == ByNothing {
				g := prometheus.NewGauge(prometheus.GaugeOpts{Name: v.Name, Help: "process"})
				g.Set(val)
				reg.MustRegister(g)
				continue
			}
			f, ok := facts[v.Name]
			if !ok {
				t.Fatalf("%s: %s not in the %s source", m.ID, v.Name, rel)
			}
			help := "[" + f.Stability + "] " + string(m.ID)
			lv := labelValuesFor(t, f.Labels)
			switch f.Type {
			case "counter":
				c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: f.Name, Help: help}, f.Labels)
				c.WithLabelValues(lv...).Add(val)
				reg.MustRegister(c)
			case "gauge":
				g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: f.Name, Help: help}, f.Labels)
				g.WithLabelValues(lv...).Set(val)
				reg.MustRegister(g)
			case "histogram":
				h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: f.Name, Help: help, Buckets: []float64{1, 1000}}, f.Labels)
				h.WithLabelValues(lv...).Observe(val)
				reg.MustRegister(h)
			default:
				t.Fatalf("%s: type %s", f.Name, f.Type)
			}
		}
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range fams {
		if err := enc.Encode(f); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// labelValuesFor names deployments.apps (and global-default) in whatever
// labels the release uses.
func labelValuesFor(t testing.TB, labels []string) []string {
	t.Helper()
	out := make([]string, len(labels))
	resourceOnly := !slices.Contains(labels, "group")
	for i, l := range labels {
		switch l {
		case "group":
			out[i] = "apps"
		case "resource":
			out[i] = "deployments"
			if resourceOnly {
				out[i] = "deployments.apps" // schema.GroupResource.String()
			}
		case "version":
			out[i] = "v1"
		case "kind":
			out[i] = "Deployment"
		case "verb":
			out[i] = "WATCH"
		case "scope":
			out[i] = "cluster"
		case "component":
			out[i] = "apiserver"
		case "subresource":
			out[i] = ""
		case "priority_level", "flow_schema":
			out[i] = "global-default"
		default:
			t.Fatalf("no value for label %q", l)
		}
	}
	return out
}

// TestExtractPerRelease runs Extract on the exposition each release's
// definitions produce and checks that every value lands in its field, that
// the release is detected from names and labels alone, and what is missing.
func TestExtractPerRelease(t *testing.T) {
	values := map[MetricID]float64{
		Watchers:              3,
		InitEvents:            11,
		TerminatedWatchers:    2,
		WatchEvents:           19,
		WatchEventSizes:       700,
		CacheEventsReceived:   13,
		CacheEventsDispatched: 17,
		CacheResourceVersion:  12345,
		CacheInitializations:  1,
		CacheCapacity:         100,
		WatchListDuration:     0.5,
		ExecutingSeats:        8,
		LimitSeats:            49,
		ExecutingRequests:     2,
		Goroutines:            2231,
		ResidentMemory:        5e8,
		ProcessStartTime:      1.79594770991e+09,
	}
	tests := []struct {
		release Release
		// detected is the range names and labels allow.
		min, max Release
		missing  []MetricID
	}{
		{Release{1, 30}, Release{}, Release{1, 30}, []MetricID{RegisteredWatchers, CacheResourceVersion}},
		{Release{1, 31}, Release{1, 31}, Release{1, 33}, []MetricID{RegisteredWatchers}},
		{Release{1, 32}, Release{1, 31}, Release{1, 33}, []MetricID{RegisteredWatchers}},
		{Release{1, 33}, Release{1, 31}, Release{1, 33}, []MetricID{RegisteredWatchers}},
		{Release{1, 34}, Release{1, 34}, Release{1, 35}, []MetricID{RegisteredWatchers}},
		{Release{1, 35}, Release{1, 34}, Release{1, 35}, []MetricID{RegisteredWatchers}},
		{Release{1, 36}, Release{1, 36}, Release{1, 36}, []MetricID{RegisteredWatchers}},
		{Release{1, 37}, Release{1, 37}, Release{}, []MetricID{RegisteredWatchers}},
	}
	for _, tt := range tests {
		t.Run(tt.release.String(), func(t *testing.T) {
			text := exposeRelease(t, tt.release, values)
			s, err := Parse(bytes.NewReader(text), tt.release.String()+".prom")
			if err != nil {
				t.Fatal(err)
			}
			snap := Extract(s)

			if snap.Version.Min != tt.min || snap.Version.Max != tt.max {
				t.Errorf("detected %s .. %s, want %s .. %s (evidence: %s)", snap.Version.Min, snap.Version.Max, tt.min, tt.max, strings.Join(snap.Version.Evidence, "; "))
			}
			if !(snap.Version.Release.Compare(tt.release) >= 0 || tt.max.IsZero()) {
				t.Errorf("mapping release %s is older than the server's %s", snap.Version.Release, tt.release)
			}

			rv := values[CacheResourceVersion]
			if !(Variant{Since: Release{1, 31}}).In(tt.release) {
				rv = math.NaN()
			}
			want := []Resource{{
				Group: "apps", Resource: "deployments",
				Watchers: 3, RegisteredWatchers: math.NaN(),
				InitEvents: 11, TerminatedWatchers: 2, EventsReceived: 13, EventsDispatched: 17,
				CacheInitializations: 1, CacheCapacity: 100, CacheResourceVersion: rv,
				WatchEvents: 19, WatchEventBytes: 700, WatchLists: 1, WatchListSeconds: 0.5,
			}}
			if diff := cmp.Diff(want, snap.Resources, cmpopts.EquateNaNs()); diff != "" {
				t.Errorf("resources (-want +got):\n%s", diff)
			}
			wantPL := []PriorityLevel{{Name: "global-default", ExecutingSeats: 8, LimitSeats: 49, ExecutingRequests: 2,
				FlowSchemas: []FlowSchemaLoad{{Name: "global-default", ExecutingSeats: 8, ExecutingRequests: 2}}}}
			if diff := cmp.Diff(wantPL, snap.PriorityLevels); diff != "" {
				t.Errorf("priority levels (-want +got):\n%s", diff)
			}
			if snap.Goroutines != 2231 || snap.ResidentMemoryBytes != 5e8 || snap.ProcessStartTime != 1.79594770991e+09 {
				t.Errorf("process totals = %v, %v, %v", snap.Goroutines, snap.ResidentMemoryBytes, snap.ProcessStartTime)
			}
			var missing []MetricID
			for _, m := range snap.Missing {
				missing = append(missing, m.Metric)
			}
			sort.Slice(missing, func(i, j int) bool { return missing[i] < missing[j] })
			wantMissing := append([]MetricID(nil), tt.missing...)
			sort.Slice(wantMissing, func(i, j int) bool { return wantMissing[i] < wantMissing[j] })
			if diff := cmp.Diff(wantMissing, missing); diff != "" {
				t.Errorf("missing (-want +got):\n%s", diff)
			}
			if len(snap.Unknown) != 0 {
				t.Errorf("unknown: %+v", snap.Unknown)
			}

			// Given the release, the same text maps the same way.
			given := ExtractRelease(s, tt.release)
			if diff := cmp.Diff(snap.Resources, given.Resources, cmpopts.EquateNaNs()); diff != "" {
				t.Errorf("ExtractRelease resources differ from Extract (-Extract +ExtractRelease):\n%s", diff)
			}
		})
	}
}

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

// apiserver_terminated_watchers_total is read whether it carries a reason
// label or not: k8s.io/apiserver v0.38.0-beta.0 still labels it {group,
// resource} (pkg/storage/cacher/metrics/metrics.go:160-168); a release
// that splits it by reason is summed over the reasons per group/resource
// and the label set is reported as unknown, never dropped.
func TestExtractTerminatedWatchersBothShapes(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		want    float64
		unknown bool
	}{
		{"group, resource", "# TYPE apiserver_terminated_watchers_total counter\napiserver_terminated_watchers_total{group=\"\",resource=\"pods\"} 3\n", 3, false},
		{"group, resource, reason", "# TYPE apiserver_terminated_watchers_total counter\n" +
			"apiserver_terminated_watchers_total{group=\"\",reason=\"buffer_full\",resource=\"pods\"} 3\n" +
			"apiserver_terminated_watchers_total{group=\"\",reason=\"stall\",resource=\"pods\"} 2\n", 5, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse(strings.NewReader(tc.text), "m")
			if err != nil {
				t.Fatal(err)
			}
			snap := Extract(s)
			var got float64 = math.NaN()
			for _, r := range snap.Resources {
				if r.Name() == "pods" {
					got = r.TerminatedWatchers
				}
			}
			if got != tc.want {
				t.Errorf("terminated watchers of pods = %v, want %v", got, tc.want)
			}
			if unknown := len(snap.Unknown) > 0; unknown != tc.unknown {
				t.Errorf("unknown label sets %+v, want some: %v", snap.Unknown, tc.unknown)
			}
		})
	}
}
