package diagnosis

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/watches"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/metrics"
)

// Two samples of two pod watches (type 0xa) and one configmaps watch
// (type 0xb), all arrived together: the counts pin 0xb to configmaps, so
// its watcher is exact, unless /metrics says the types cannot be right.
func TestCrossCheckWithLongRunningRequests(t *testing.T) {
	prevAt, at := t0.Add(5*time.Minute), t0.Add(10*time.Minute)
	ws := []api.Watcher{typed(1000, 2, "0xa"), typed(1100, 2, "0xa"), typed(1200, 2, "0xb")}
	two := func(wr map[string]map[string]float64, one bool, metricsAt time.Time) []watches.Sample {
		prev := sample(prevAt, ws)
		cur := sample(at, ws, resourceRequest("pods-1", "pods", t0), resourceRequest("pods-2", "pods", t0), resourceRequest("cm", "configmaps", t0))
		if wr != nil {
			cur.Metrics = &watches.MetricsContext{WatchRequests: wr}
			cur.MetricsAt = metricsAt
		}
		if one {
			return []watches.Sample{cur}
		}
		return []watches.Sample{prev, cur}
	}
	tests := []struct {
		name    string
		wr      map[string]map[string]float64
		cmMatch api.Match
		warning string
		one     bool
		// metricsAt: when /metrics was read, zero when unknown.
		metricsAt time.Time
	}{
		{"no /metrics: the counts alone", nil, api.MatchExact, "", false, time.Time{}},
		{"/metrics agrees", map[string]map[string]float64{"/pods": {"namespace": 3, "cluster": 1}, "/configmaps": {"namespace": 1}}, api.MatchExact, "", false, time.Time{}},
		{"two watchers of 0xa seen earlier, one pods watch counted", map[string]map[string]float64{"/pods": {"namespace": 1}, "/configmaps": {"namespace": 2}},
			api.MatchAmbiguous, "2 initial-phase watchers of object type 0xa were already there in the earlier sample, but apiserver_longrunning_requests{verb=\"WATCH\"} counts 1 for pods", false, time.Time{}},
		{"one sample: an APF request older than the capture that /metrics does not count", map[string]map[string]float64{"/pods": {"namespace": 2, "cluster": 5}},
			api.MatchAmbiguous, "the APF dump lists 1 executing watch requests of configmaps in scope namespace that started before /metrics was read, but apiserver_longrunning_requests{verb=\"WATCH\"} counts 0", true, time.Time{}},
		{"namespaced requests counted only cluster-wide", map[string]map[string]float64{"/pods": {"cluster": 2}, "/configmaps": {"namespace": 1}},
			api.MatchAmbiguous, "the APF dump lists 2 executing watch requests of pods in scope namespace", false, time.Time{}},
		{"one sample: requests that started after /metrics was read are not held against it", map[string]map[string]float64{"/pods": {"namespace": 2}},
			api.MatchExact, "", true, t0.Add(-time.Second)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Diagnose([]watches.Server{{Name: "s", Samples: two(tc.wr, tc.one, tc.metricsAt)}}, Options{CaptureSlack: time.Second})
			var cm *api.Finding
			for i := range r.Findings {
				if r.Findings[i].Watcher.GoroutineID == 1200 {
					cm = &r.Findings[i]
				}
			}
			if cm == nil || cm.Client == nil {
				t.Fatalf("no attributed finding for the configmaps watcher: %+v", r.Findings)
			}
			if cm.Client.Match != tc.cmMatch {
				t.Errorf("configmaps watcher matched %q to %q, want %q", cm.Client.Match, cm.Client.User, tc.cmMatch)
			}
			warned := slices.ContainsFunc(r.Warnings, func(w string) bool { return tc.warning != "" && strings.Contains(w, tc.warning) })
			if warned != (tc.warning != "") {
				t.Errorf("warnings %q, want one containing %q", r.Warnings, tc.warning)
			}
			if tc.warning != "" && !slices.ContainsFunc(cm.Evidence, func(e string) bool { return strings.Contains(e, "object types were not used: "+tc.warning) }) {
				t.Errorf("the finding's evidence does not say why the types were not used: %q", cm.Evidence)
			}
		})
	}
}

func TestConnectionGroups(t *testing.T) {
	at := t0.Add(10 * time.Minute)
	ws := []api.Watcher{typed(1000, 2, "0xa"), typed(1100, 2, "0xa"), typed(1200, 2, "0xb")}
	// The configmaps watch shares a connection with one of the pod watches.
	for _, i := range []int{1, 2} {
		h := *ws[i].Handler
		h.ConnGoroutineID, h.ConnAddress, h.ConnWatches, h.Transport = 7, "0xc0001", 2, watches.TransportHTTP2
		ws[i].Handler = &h
	}
	s := sample(at, ws, resourceRequest("pods-1", "pods", t0), resourceRequest("pods-2", "pods", t0), resourceRequest("cm", "configmaps", t0))
	r := Diagnose([]watches.Server{{Name: "s", Samples: []watches.Sample{s}}}, Options{CaptureSlack: time.Second})
	byID := map[int64]api.Finding{}
	for _, f := range r.Findings {
		byID[f.Watcher.GoroutineID] = f
	}
	has := func(id int64, text string) bool {
		return slices.ContainsFunc(byID[id].Evidence, func(e string) bool { return strings.Contains(e, text) })
	}
	if !has(1100, "HTTP/2 connection 0xc0001 (goroutine 7) carries 2 watch requests, 2 in this report") || !has(1200, "HTTP/2 connection 0xc0001 (goroutine 7) carries 2 watch requests") {
		t.Errorf("connection group not reported: %q / %q", byID[1100].Evidence, byID[1200].Evidence)
	}
	if !has(1100, "shares that connection with watcher goroutine 1200, attributed exact to cm: the same client process") {
		t.Errorf("the exact connection-mate is not named: %q", byID[1100].Evidence)
	}
	if byID[1100].Client.Match != api.MatchAmbiguous || has(1000, "shares that connection") || has(1200, "shares that connection") {
		t.Errorf("the connection group claimed more than it forces: %+v", byID)
	}
	if !has(1000, "HTTP/2 connection (goroutine 800) carries only this watch request") {
		t.Errorf("a lone connection: %q", byID[1000].Evidence)
	}
}

func TestMetricsEvidenceSizes(t *testing.T) {
	b := func(ub, n float64) metrics.SizeBucket { return metrics.SizeBucket{UpperBound: ub, Count: n} }
	buckets := []metrics.SizeBucket{b(1024, 6), b(16384, 6), b(32768, 4908), b(math.Inf(1), 4908)}
	f := &api.Finding{Client: &api.Client{Resource: "pods", Path: "/api/v1/pods"}, Watcher: api.Watcher{Handler: &api.Handler{}}}
	m := &watches.MetricsContext{EventSizes: map[string][]metrics.SizeBucket{"/pods": buckets}}
	for _, tc := range []struct {
		size int
		want string
	}{
		{21108, "the handler writes an event of 21108 bytes; apiserver_watch_events_sizes has counted 4902 pods events of 16 KiB to 32 KiB: consistent"},
		{409600, "the handler writes an event of 409600 bytes; apiserver_watch_events_sizes has counted no pods event of over 32 KiB yet: not corroborated, not contradicted"},
		{2000, "has counted no pods event of 1 KiB to 16 KiB yet"},
	} {
		f.Watcher.Handler.EventBytes = tc.size
		got := metricsEvidence(f, m)
		if len(got) != 1 || !strings.Contains(got[0], tc.want) {
			t.Errorf("size %d: %q, want %q...", tc.size, got, tc.want)
		}
	}
}
