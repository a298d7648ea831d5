package live

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/bundle"
	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// TestEveryPieceOfEvidenceIsOfTheProcessItClaimsATraceOfAnotherBackend:
// through the kubeconfig host, a load balancer answers the /metrics read
// right after the trace from another backend (another process start
// than the samples'): the trace is set aside with a note naming the
// mismatch, nothing is decided from it, and collect's bundle does not
// keep it for analyze. The same balancer staying on one backend keeps the
// trace.
func TestEveryPieceOfEvidenceIsOfTheProcessItClaimsATraceOfAnotherBackend(t *testing.T) {
	// Not parallel: it runs the process's one execution tracer.
	const x, y = 1764410000, 1764420000
	for _, tc := range []struct {
		name string
		// starts are the /metrics reads in order: sample 1 and its five
		// identity probes (pin.go), right before and right after the
		// trace, sample 2 and its probes.
		starts []float64
		aside  string
	}{
		{"one backend", []float64{x}, ""},
		{"the trace's connection on another backend", []float64{x, x, x, x, x, x, x, y, x},
			"process_start_time_seconds was 1764410000 in sample 1, 1764410000 right before the trace and 1764420000 right after it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lb := fakeapiserver.Start(t, golden.Fixture("t1"), golden.Fixture("t2"))
			lb.Trace = true
			lb.Endpoints = []string{"127.0.0.1:1"} // nothing listens there: read through the host
			lb.ProcessStart = tc.starts
			cfg := traceConfig(t, lb, model.EvidenceTrace)
			cfg.APIServers = nil
			d := &bundle.Dir{Root: t.TempDir()}
			res, err := Run(context.Background(), cfg, d)
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Finish(res.Manifest(api.Manifest{})); err != nil {
				t.Fatal(err)
			}
			_, statErr := os.Stat(filepath.Join(d.Root, bundle.SafeName(lb.Address()), "trace.out"))
			ir := res.Instances[0]
			if ir.Instance.Pinned || ir.Trace == nil {
				t.Fatalf("instance %+v, trace %+v: want an unpinned instance traced", ir.Instance, ir.Trace)
			}
			if tc.aside == "" {
				if ir.Trace.Summary == nil || statErr != nil {
					t.Errorf("one backend: trace set aside: %v; the bundle's trace.out: %v", ir.Trace.Err, statErr)
				}
				return
			}
			if ir.Trace.Summary != nil {
				t.Fatalf("a trace of another process kept: %s", ir.Trace.Window)
			}
			notes := strings.Join(ir.Notes, "\n")
			if !strings.Contains(notes, tc.aside) || !strings.Contains(notes, "set aside, nothing is decided from it") {
				t.Errorf("notes %q\nwant one setting the trace aside: %q", ir.Notes, tc.aside)
			}
			if ir.Trace.Fetch == nil || !strings.Contains(ir.Trace.Fetch.Error, tc.aside) || ir.Trace.Fetch.File != "" {
				t.Errorf("the trace's fetch %+v: want its error to say why it was set aside, and no file kept", ir.Trace.Fetch)
			}
			if !os.IsNotExist(statErr) {
				t.Errorf("the bundle keeps trace.out (%v): analyze would read a trace set aside", statErr)
			}
		})
	}
}
