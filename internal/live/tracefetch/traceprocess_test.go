package tracefetch

import (
	"context"
	"math"
	"testing"
	"time"

	"k8s.io/utils/clock"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

func TestOtherProcess(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		sample, before, after float64
		aside                 bool
	}{
		{1, 1, 1, false},
		{1, nan, nan, false}, // nothing to compare: kept
		{nan, 2, 2, false},
		{1, 2, 2, true},
		{1, 1, 2, true},
		{nan, 1, 2, true},
	} {
		if got := otherProcess("api", tc.sample, tc.before, tc.after) != nil; got != tc.aside {
			t.Errorf("otherProcess(%v, %v, %v) set aside %v, want %v", tc.sample, tc.before, tc.after, got, tc.aside)
		}
	}
	// The error says each read, "not read" where one failed.
	err := otherProcess("api", nan, 1764410000, 1764420000)
	want := "api: the execution trace was set aside, nothing is decided from it: process_start_time_seconds was not read in sample 1, 1764410000 right before the trace and 1764420000 right after it: through the load balancer the trace may come from another API server process"
	if err == nil || err.Error() != want {
		t.Errorf("otherProcess error %v, want %q", err, want)
	}
}

// TestSampleStart: sample 1's /metrics start, NaN without a sample or a
// start read.
func TestSampleStart(t *testing.T) {
	t.Parallel()
	metricsAt := func(start float64) api.Sample {
		return api.Sample{Fetches: []api.FetchInfo{{Kind: api.FileAPFRequests, ProcessStartTime: 5}, {Kind: api.FileMetrics, ProcessStartTime: start}}}
	}
	for _, tc := range []struct {
		name    string
		samples []api.Sample
		want    float64
	}{
		{"no sample", nil, math.NaN()},
		{"no start read", []api.Sample{metricsAt(0)}, math.NaN()},
		{"sample 1's", []api.Sample{metricsAt(100), metricsAt(200)}, 100},
	} {
		got := SampleStart(&model.InstanceResult{Samples: tc.samples})
		if got != tc.want && !(math.IsNaN(got) && math.IsNaN(tc.want)) {
			t.Errorf("%s: SampleStart = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestProcessStart reads the start of the process behind a client from
// its /metrics, and NaN when /metrics fails.
func TestProcessStart(t *testing.T) {
	t.Parallel()
	for _, fail := range []bool{false, true} {
		s := fakeapiserver.Start(t, golden.Fixture("t2"))
		s.ProcessStart = []float64{1764410000}
		s.FailMetrics = fail
		cfg := model.Config{REST: fakeapiserver.RESTConfig(t, s, fakeapiserver.TokenAdmin), RequestTimeout: 10 * time.Second, Clock: clock.RealClock{}}
		c, err := cfg.ClientFor(model.Instance{Name: s.Address(), Address: s.Address(), Pinned: true})
		if err != nil {
			t.Fatal(err)
		}
		got := processStart(context.Background(), c)
		if fail && !math.IsNaN(got) || !fail && got != 1764410000 {
			t.Errorf("failing /metrics %v: processStart = %v", fail, got)
		}
	}
}
