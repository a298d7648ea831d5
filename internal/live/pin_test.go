package live

import (
	"context"
	"strings"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
)

// served counts the requests of path (with its query) s served.
func served(s *fakeapiserver.Server, path string) int {
	n := 0
	for _, p := range s.Requests() {
		if p == path {
			n++
		}
	}
	return n
}

// Through the kubeconfig host, a sample that read evidence without
// identity is tied to its process only by pinProbes reads of it: one
// probe right after each such fetch, and more at the end until there are
// enough. Profiling off, the sample reads the two APF dumps and /version:
// its /metrics and three probes, then two more. A probe that names
// another process makes the sample mixed, and says after what.
func TestSampleIsTiedToItsProcessByProbes(t *testing.T) {
	t.Parallel()
	const x, y = 1764410000, 1764420000
	for _, tc := range []struct {
		name   string
		starts []float64
		// mixed is what Mixed says, "" for a sample tied to its process.
		mixed string
		// reads is how many /metrics the sample made.
		reads int
	}{
		{"every probe agrees", []float64{x}, "", pinProbes},
		{"the last probe names another process", []float64{x, x, x, x, x, y}, "sample 1 reached different API server processes (process_start_time_seconds 1764410000.00, then 1764420000.00 at the end of the sample)", pinProbes},
		{"the probe after the first APF dump does", []float64{x, y}, "sample 1 reached different API server processes (process_start_time_seconds 1764410000.00, then 1764420000.00 after GET /debug/api_priority_and_fairness/dump_requests?includeRequestDetails=1)", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			lb := fakeapiserver.Start(t, golden.Fixture("t2"))
			lb.Endpoints = []string{"127.0.0.1:1"} // nothing listens there: read through the host
			lb.NoProfiling = true
			lb.ProcessStart = tc.starts
			cfg := model.Config{REST: fakeapiserver.RESTConfig(t, lb, fakeapiserver.TokenAdmin), Samples: 1, RequestTimeout: 10 * time.Second, Clock: testingclock.NewFakeClock(time.Now())}
			res, err := Run(context.Background(), cfg, NewCaptures())
			if err != nil {
				t.Fatal(err)
			}
			ir := res.Instances[0]
			if got := ir.Samples[0].Mixed; !strings.HasPrefix(got, tc.mixed) || (tc.mixed == "") != (got == "") {
				t.Errorf("mixed %q, want %q", got, tc.mixed)
			}
			if (ir.Spread != "") != (tc.mixed != "") {
				t.Errorf("spread %q: want it set when, and only when, the sample reached two processes", ir.Spread)
			}
			// Through the host with no connection of its own, the cost
			// reads /metrics no more (harm/cost.go).
			if got := served(lb, "/metrics"); got != tc.reads {
				t.Errorf("%d /metrics read by the sample, want %d", got, tc.reads)
			}
			if tc.mixed != "" {
				return
			}
			want := "sample 1: 6 reads of the process over this connection, one right after each of its 3 fetches that carry no process identity, all named process_start_time_seconds 1764410000.00 (5 identity probes of /metrics, "
			if notes := strings.Join(ir.Notes, "\n"); !strings.Contains(notes, want) {
				t.Errorf("notes %q\nlack %q", ir.Notes, want)
			}
			if ir.Cost == nil || ir.Cost.BytesRead < 6*ir.Samples[0].Fetches[0].Bytes {
				t.Errorf("cost %+v: want the five probes' bytes counted beside the sample's /metrics", ir.Cost)
			}
		})
	}
}
