package live

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/internal/live/harm"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/metrics"
)

// fixturePauses reads the pause histogram of a capture's metrics.txt.
func fixturePauses(t *testing.T, dir string) metrics.Pauses {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "metrics.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := metrics.Parser{Families: []string{metrics.SchedPausesOther, metrics.SchedPausesStoppingOther}}.Parse(f, dir)
	if err != nil {
		t.Fatal(err)
	}
	p, ok, err := metrics.SchedPauses(s)
	if err != nil || !ok {
		t.Fatalf("%s: ok %v, err %v", dir, ok, err)
	}
	return p
}

// withoutPauses copies a capture with the pause histogram taken out of its
// /metrics, as a server built with Go older than 1.22 serves it.
func withoutPauses(t *testing.T, src string) string {
	t.Helper()
	dir := fakeapiserver.CopyCapture(t, src, "2026-11-29T10:00:00Z")
	b, err := os.ReadFile(filepath.Join(dir, "metrics.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var keep []string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.Contains(l, metrics.SchedPausesOther) {
			keep = append(keep, l)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "metrics.txt"), []byte(strings.Join(keep, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The cost of a run is the growth of the server's pause histogram from
// the first /metrics read to one read after the last fetch, and every byte
// read. The fake server serves the n-th /metrics read from the n-th
// capture, so the read after the last fetch sees the second one.
func TestRunCost(t *testing.T) {
	t.Parallel()
	t1, t2 := golden.Fixture("t1"), golden.Fixture("t2")
	d, err := fixturePauses(t, t2).Since(fixturePauses(t, t1))
	if err != nil || !d.StoppingKnown || d.Stopping <= 0 {
		t.Fatalf("the fixtures' pauses: %+v, %v: want their stopping part known", d, err)
	}
	noHist := withoutPauses(t, t1)
	tests := []struct {
		name     string
		captures []string
		want     api.ServerCost
		note     string
		// finalRead: /metrics is read once more after the last fetch; not
		// when the first read gave no histogram to compare with.
		finalRead bool
	}{
		{"no pause", []string{t1, t1}, api.ServerCost{PausesMeasured: true, StoppingSeconds: new(float64), Note: harm.WholeProcessNote}, "", true},
		// The real capture's own stopping part: 0.017 of its 31 ms.
		{"the fixture's dump", []string{t1, t2}, api.ServerCost{PausesMeasured: true, Pauses: d.Count, PauseSeconds: d.Sum, LargestPauseAtMostSeconds: d.LargestAtMost, StoppingSeconds: &d.Stopping, Note: harm.WholeProcessNote}, "", true},
		{"restarted", []string{t2, t1}, api.ServerCost{}, "count went down", true},
		{"no histogram", []string{noHist, noHist}, api.ServerCost{}, "exports no go_sched_pauses_total_other_seconds", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := fakeapiserver.Start(t, tt.captures...)
			// The final read's size is the file's: served whole.
			s.FullMetrics = true
			cfg := model.Config{REST: fakeapiserver.RESTConfig(t, s, fakeapiserver.TokenAdmin), APIServers: []string{s.Address()}, Samples: 1, RequestTimeout: 10 * time.Second, Clock: testingclock.NewFakeClock(time.Now()), Force: true}
			res, err := Run(context.Background(), cfg, NewCaptures())
			if err != nil {
				t.Fatal(err)
			}
			ir := res.Instances[0]
			if ir.Cost == nil {
				t.Fatal("no cost")
			}
			got := *ir.Cost
			// Every fetch, and the final /metrics read of the last capture.
			last, err := os.Stat(filepath.Join(tt.captures[1], "metrics.txt"))
			if err != nil {
				t.Fatal(err)
			}
			var wantBytes int64
			if tt.finalRead {
				wantBytes = last.Size()
			}
			for _, f := range ir.Samples[0].Fetches {
				wantBytes += f.Bytes
			}
			if got.BytesRead != wantBytes || wantBytes < last.Size() {
				t.Errorf("bytes read %d, want %d", got.BytesRead, wantBytes)
			}
			got.BytesRead = 0
			if tt.note != "" {
				if !strings.Contains(got.Note, tt.note) {
					t.Errorf("note %q, want one saying %q", got.Note, tt.note)
				}
				got.Note = ""
			}
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-12 })); diff != "" {
				t.Errorf("cost (-want +got):\n%s", diff)
			}
		})
	}
}

// The metrics command reads /metrics alone: no cost read is added.
func TestRunCostNotMeasuredForOnly(t *testing.T) {
	t.Parallel()
	s := fakeapiserver.Start(t, golden.Fixture("t1"))
	cfg := model.Config{REST: fakeapiserver.RESTConfig(t, s, fakeapiserver.TokenAdmin), APIServers: []string{s.Address()}, Samples: 1, RequestTimeout: 10 * time.Second, Clock: testingclock.NewFakeClock(time.Now()), Only: []api.FileKind{api.FileMetrics}}
	res, err := Run(context.Background(), cfg, NewCaptures())
	if err != nil {
		t.Fatal(err)
	}
	if res.Instances[0].Cost != nil {
		t.Errorf("cost %+v, want none", res.Instances[0].Cost)
	}
	if diff := cmp.Diff([]string{"/version", "/metrics"}, s.Requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}
