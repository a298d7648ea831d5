package engine

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/internal/live"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// autoStepClock moves virtual time by d when waited on for d: two samples
// 70 s apart take no real time.
type autoStepClock struct{ *testingclock.FakeClock }

func (c autoStepClock) After(d time.Duration) <-chan time.Time {
	ch := c.FakeClock.After(d)
	c.FakeClock.Step(d)
	return ch
}

func restConfig(t *testing.T, s *fakeapiserver.Server) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", fakeapiserver.Kubeconfig(t, s, fakeapiserver.TokenAdmin))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func liveConfig(t *testing.T, s *fakeapiserver.Server, pinned bool) model.Config {
	t.Helper()
	cfg := model.Config{REST: restConfig(t, s), Samples: 2, Interval: 70 * time.Second, RequestTimeout: 10 * time.Second, Force: true,
		Clock: autoStepClock{testingclock.NewFakeClock(time.Date(2026, 11, 29, 10, 23, 9, 0, time.UTC))}}
	if pinned {
		cfg.APIServers = []string{s.Address()}
	}
	return cfg
}

// TestRunRestartedInstance: an instance that restarted between samples is
// two servers, each known by its fields, and each gets its instance's
// cost and evidence.
func TestRunRestartedInstance(t *testing.T) {
	s := fakeapiserver.Start(t, golden.Fixture("t1"), golden.Fixture("t2"))
	s.ProcessStart = []float64{1.7e9, 1.8e9}
	res, err := Run(context.Background(), Config{Live: liveConfig(t, s, true)})
	if err != nil {
		t.Fatal(err)
	}
	// The identity of each: the fields, not the name nor the input.
	var got []Process
	for _, a := range res.Processes {
		got = append(got, Process{Instance: a.Instance, ProcessStart: a.ProcessStart, Restarted: a.Restarted})
	}
	want := []Process{
		{Instance: model.Instance{Name: s.Address(), Address: s.Address(), Pinned: true}, ProcessStart: time.Unix(1.7e9, 0).UTC(), Restarted: true},
		{Instance: model.Instance{Name: s.Address(), Address: s.Address(), Pinned: true}, ProcessStart: time.Unix(1.8e9, 0).UTC(), Restarted: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("identities (-want +got):\n%s", diff)
	}
	if len(res.Report.APIServers) != 2 {
		t.Fatalf("report servers = %+v", res.Report.APIServers)
	}
	for i, a := range res.Report.APIServers {
		if a.Name != res.Processes[i].Name || a.Cost == nil || a.Cost.BytesRead == 0 {
			t.Errorf("server %d: name %q (want %q), cost %+v: want the instance's cost", i, a.Name, res.Processes[i].Name, a.Cost)
		}
	}
}

// TestRunThroughTheKubeconfigHost: a server not pinned says so in a note.
func TestRunThroughTheKubeconfigHost(t *testing.T) {
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	cfg := liveConfig(t, s, false)
	cfg.Samples = 1
	res, err := Run(context.Background(), Config{Live: cfg, Notes: []string{"the caller's note"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Processes) != 1 || res.Processes[0].Instance.Pinned {
		t.Fatalf("servers = %+v, want one, not pinned", res.Processes)
	}
	notes := res.Report.APIServers[0].Notes
	if len(notes) == 0 || notes[len(notes)-1] != notPinnedNote {
		t.Errorf("notes = %q, want the last to be %q", notes, notPinnedNote)
	}
	if len(res.Report.Warnings) == 0 || res.Report.Warnings[0] != "the caller's note" {
		t.Errorf("warnings = %q, want the caller's note first", res.Report.Warnings)
	}
}

// TestRunNothingRead: no instance answered: ErrNoInstance, with the first
// error in the caller's words, and the report of nothing.
func TestRunNothingRead(t *testing.T) {
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	s.Fail = true
	cfg := liveConfig(t, s, true)
	cfg.Clock = fakeapiserver.NoWaitClock{FakeClock: testingclock.NewFakeClock(time.Now()), T: t}
	words := Phrasing{Errors: func(ir model.InstanceResult) []string { return []string{"in our words: " + ir.Instance.Name} }}
	res, err := Run(context.Background(), Config{Live: cfg, Phrasing: words})
	if !errors.Is(err, ErrNoInstance) {
		t.Fatalf("err = %v, want ErrNoInstance", err)
	}
	if want := "no API server instance could be read: in our words: " + s.Address(); err.Error() != want {
		t.Errorf("err = %q, want %q", err, want)
	}
	if res.Report == nil || len(res.Report.APIServers) != 0 || len(res.Report.Errors) != 1 {
		t.Errorf("report = %+v, want no server and the error", res.Report)
	}
}

// recorder is a Raw target that counts what it was given.
type recorder struct{ stored int }

func (r *recorder) Store(instance string, sample int, kind api.FileKind, body io.Reader) error {
	r.stored++
	_, err := io.Copy(io.Discard, body)
	return err
}

// TestRunRaw: with Raw the responses go to it unparsed and no report is
// made; the run's record comes back for the bundle's manifest.
func TestRunRaw(t *testing.T) {
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	cfg := liveConfig(t, s, true)
	cfg.Samples = 1
	var rec recorder
	res, err := Run(context.Background(), Config{Live: cfg, Raw: &rec})
	if err != nil {
		t.Fatal(err)
	}
	if res.Report != nil || res.Loaded != nil || res.Run == nil || len(res.Run.Instances) != 1 {
		t.Errorf("result = %+v, want the run's record alone", res)
	}
	if rec.stored == 0 {
		t.Error("nothing stored in the Raw target")
	}
}

func TestForceAdvised(t *testing.T) {
	for _, tc := range []struct {
		name     string
		withheld []*model.PauseBudgetError
		want     bool
	}{
		{"none", nil, false},
		{"estimated", []*model.PauseBudgetError{{Estimate: model.Estimate{Basis: "debug=1 profile"}}}, true},
		{"not estimated: the server did not answer", []*model.PauseBudgetError{{}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := (&Result{Withheld: tc.withheld}).ForceAdvised(); got != tc.want {
				t.Errorf("ForceAdvised = %v, want %v", got, tc.want)
			}
		})
	}
}

// An instance whose trace was set aside, with no dump in its place,
// makes the report incomplete with why; one whose trace was kept does
// not. The run's instances and a bundle's manifest say it alike
// (api.Instance's Incomplete).
func TestAsideTraces(t *testing.T) {
	t.Parallel()
	aside := model.InstanceResult{Trace: &model.TraceResult{SetAside: true, Err: errors.New("api: the execution trace was set aside")}, Samples: []api.Sample{{}, {}}}
	kept := model.InstanceResult{Trace: &model.TraceResult{}, Samples: []api.Sample{{}, {}}}
	r := &Result{Report: &api.Report{}, Run: &live.Result{Instances: []model.InstanceResult{kept, aside}}}
	recorded := r.Run.Manifest(api.Manifest{}).Instances
	r.asideTraces(recorded)
	want := []string{"api: the execution trace was set aside; no goroutine dump took its place, so the watches it was chosen to decide are not decided"}
	if diff := cmp.Diff(want, r.Report.Incomplete); diff != "" {
		t.Errorf("incomplete (-want +got):\n%s", diff)
	}
	(&Result{Run: r.Run}).asideTraces(recorded) // no report: nothing to say it in
}
