package live

import (
	"bytes"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

func storeFixture(t *testing.T, c *Captures, instance string, sample int, kind api.FileKind, file string) {
	t.Helper()
	b, err := os.ReadFile(golden.Fixture("t2", file))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Store(instance, sample, kind, bytes.NewReader(b)); err != nil {
		t.Fatalf("Store %s: %v", file, err)
	}
}

// TestCapturesKeepOneCapturePerInstanceAndSample: Loaded gives one
// capture per instance and sample stored, in the result's order, with the
// sample's capture time and the instance's version; a profile stored after
// the debug=2 dump of its sample does not replace it.
func TestCapturesKeepOneCapturePerInstanceAndSample(t *testing.T) {
	t.Parallel()
	c := NewCaptures()
	storeFixture(t, c, "b", 1, api.FileGoroutineDebug2, "goroutine-debug2.txt")
	storeFixture(t, c, "b", 1, api.FileGoroutineDebug1, "goroutine-debug1.txt")
	storeFixture(t, c, "a", 1, api.FileGoroutineDebug1, "goroutine-debug1.txt")
	storeFixture(t, c, "a", 2, api.FileAPFRequests, "apf-requests.txt")
	at := time.Date(2026, 11, 29, 10, 24, 32, 0, time.UTC)
	date := at
	res := &Result{Instances: []model.InstanceResult{
		{Instance: model.Instance{Name: "a"}, Version: "v1.37.2", Samples: []api.Sample{{CapturedAt: at}, {CapturedAt: at.Add(time.Minute), Mixed: "through the balancer"}}},
		{Instance: model.Instance{Name: "b"}, Version: "v1.36.3", Samples: []api.Sample{{CapturedAt: at, Fetches: []api.FetchInfo{{Kind: api.FileGoroutineDebug2, ServerDate: &date}}}}},
	}}
	l := c.Loaded(res)
	type capture struct {
		Name, Instance, Version, Source, Mixed string
		At                                     time.Time
		Dump, Aggregated, APF                  bool
	}
	var got []capture
	for _, cp := range l.Captures {
		got = append(got, capture{cp.Name, cp.Instance, cp.Version, cp.CapturedAtSource, cp.Mixed, cp.CapturedAt, cp.Dump != nil, cp.Dump != nil && cp.Dump.Aggregated(), cp.Requests != nil})
	}
	want := []capture{
		{Name: "a sample 1", Instance: "a", Version: "v1.37.2", Source: "local clock", At: at, Dump: true, Aggregated: true},
		{Name: "a sample 2", Instance: "a", Version: "v1.37.2", Source: "local clock", Mixed: "through the balancer", At: at.Add(time.Minute), APF: true},
		{Name: "b sample 1", Instance: "b", Version: "v1.36.3", Source: "server Date header", At: at, Dump: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("captures (-want +got):\n%s", diff)
	}
}

func TestResultManifest(t *testing.T) {
	t.Parallel()
	res := &Result{
		Notes: []string{"discovered 2 instances"},
		Instances: []model.InstanceResult{
			{Instance: model.Instance{Name: "a", Address: "10.0.0.1:6443", Pinned: true}, Version: "v1.37.2", Notes: []string{"no dump needed"}, DumpEvidence: "the goroutine dump"},
			{Instance: model.Instance{Name: "b"}, Errors: []error{errors.New("refused"), errors.New("again")}},
		},
	}
	got := res.Manifest(api.Manifest{Kind: api.KindManifest, Notes: []string{"first"}})
	want := api.Manifest{
		Kind: api.KindManifest,
		Instances: []api.Instance{
			{Name: "a", Address: "10.0.0.1:6443", Pinned: true, Version: "v1.37.2", Evidence: "the goroutine dump"},
			{Name: "b", Error: "refused"},
		},
		Notes: []string{"first", "discovered 2 instances", "a: no dump needed"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("manifest (-want +got):\n%s", diff)
	}
}
