package diagnosis

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/watch-doctor/watch-doctor/internal/watches"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

func TestJudgeRules(t *testing.T) {
	streaming := func(id int64, wait int) api.Watcher {
		w := initialWatcher(id, wait)
		w.Phase = api.PhaseStreaming
		return w
	}
	running := initialWatcher(500, 0)
	running.Blocked, running.State = false, "running"
	tests := []struct {
		name    string
		samples []watches.Sample
		want    []verdict
	}{
		{"one sample, blocked two minutes: stuck", []watches.Sample{sample(t0, []api.Watcher{initialWatcher(1000, 2)})},
			[]verdict{{ID: 1000, Type: api.StuckInitialEvents, Severity: api.SeverityCritical}}},
		{"one sample, blocked under a minute: slow, undecided", []watches.Sample{sample(t0, []api.Watcher{initialWatcher(1000, 0)})},
			[]verdict{{ID: 1000, Type: api.SlowInitialEvents, Severity: api.SeverityWarning}}},
		{"running initial-phase watcher: no finding", []watches.Sample{sample(t0, []api.Watcher{running})}, nil},
		{"streaming blocked a minute", []watches.Sample{sample(t0, []api.Watcher{streaming(1000, 1)})},
			[]verdict{{ID: 1000, Type: api.BlockedStreaming, Severity: api.SeverityWarning}}},
		{"streaming blocked under a minute: no finding", []watches.Sample{sample(t0, []api.Watcher{streaming(1000, 0)})}, nil},
		{"two samples, no minutes then a longer wait: stuck", []watches.Sample{
			sample(t0, []api.Watcher{initialWatcher(1000, 0)}),
			sample(t0.Add(70*time.Second), []api.Watcher{initialWatcher(1000, 1)}),
		}, []verdict{{ID: 1000, Type: api.StuckInitialEvents, Severity: api.SeverityCritical}}},
		{"two samples, wait restarted between them: progressing with long stalls", []watches.Sample{
			sample(t0, []api.Watcher{initialWatcher(1000, 2)}),
			sample(t0.Add(3*time.Minute), []api.Watcher{initialWatcher(1000, 1)}),
		}, []verdict{{ID: 1000, Type: api.SlowInitialEvents, Severity: api.SeverityWarning}}},
		{"two samples, continuous: stuck", []watches.Sample{
			sample(t0, []api.Watcher{initialWatcher(1000, 2)}),
			sample(t0.Add(3*time.Minute), []api.Watcher{initialWatcher(1000, 5)}),
		}, []verdict{{ID: 1000, Type: api.StuckInitialEvents, Severity: api.SeverityCritical}}},
		{"two samples, not blocked in the first: progressing", []watches.Sample{
			sample(t0, []api.Watcher{running}),
			sample(t0.Add(70*time.Second), []api.Watcher{initialWatcher(500, 0)}),
		}, []verdict{{ID: 500, Type: api.SlowInitialEvents, Severity: api.SeverityInfo}}},
		{"two samples far apart, never a minute: progressing", []watches.Sample{
			sample(t0, []api.Watcher{initialWatcher(1000, 0)}),
			sample(t0.Add(4*time.Minute), []api.Watcher{initialWatcher(1000, 0)}),
		}, []verdict{{ID: 1000, Type: api.SlowInitialEvents, Severity: api.SeverityInfo}}},
		{"moved on between samples: no finding", []watches.Sample{
			sample(t0, []api.Watcher{initialWatcher(1000, 0)}),
			sample(t0.Add(70*time.Second), []api.Watcher{streaming(1000, 0)}),
		}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// No APF requests: clients are not matched here.
			for i := range tc.samples {
				tc.samples[i].Requests = nil
			}
			r := Diagnose([]watches.Server{{Name: "s", Samples: tc.samples}}, Options{})
			if diff := cmp.Diff(tc.want, verdicts(r)); diff != "" {
				t.Errorf("verdicts (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTwoSamplesWithoutCaptureTimes: with the interval unknown only a wait
// that went down proves progress; the same or a longer wait is judged on
// its own.
func TestTwoSamplesWithoutCaptureTimes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		w1, w2 int
		want   verdict
	}{
		{"wait grew: stuck", 0, 2, verdict{ID: 1000, Type: api.StuckInitialEvents, Severity: api.SeverityCritical}},
		{"same wait: stuck", 2, 2, verdict{ID: 1000, Type: api.StuckInitialEvents, Severity: api.SeverityCritical}},
		{"wait fell to zero: progressing", 2, 0, verdict{ID: 1000, Type: api.SlowInitialEvents, Severity: api.SeverityInfo}},
		{"wait fell: progressing with long stalls", 5, 2, verdict{ID: 1000, Type: api.SlowInitialEvents, Severity: api.SeverityWarning}},
		{"under a minute twice: undecided", 0, 0, verdict{ID: 1000, Type: api.SlowInitialEvents, Severity: api.SeverityWarning}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s1 := sample(time.Time{}, []api.Watcher{initialWatcher(1000, tc.w1)})
			s2 := sample(time.Time{}, []api.Watcher{initialWatcher(1000, tc.w2)})
			s1.Requests, s2.Requests = nil, nil
			r := Diagnose([]watches.Server{{Name: "s", Samples: []watches.Sample{s1, s2}}}, Options{})
			if diff := cmp.Diff([]verdict{tc.want}, verdicts(r)); diff != "" {
				t.Errorf("verdicts (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTwoSampleRuleAllowsForCaptureSlack: capture times may precede the
// dumps by the slack, so 2m0s between capture times proves less than two
// whole minutes.
func TestTwoSampleRuleAllowsForCaptureSlack(t *testing.T) {
	s1 := sample(t0, []api.Watcher{initialWatcher(1000, 1)})
	s2 := sample(t0.Add(2*time.Minute), []api.Watcher{initialWatcher(1000, 2)})
	s1.Requests, s2.Requests = nil, nil
	r := Diagnose([]watches.Server{{Name: "s", Samples: []watches.Sample{s1, s2}}}, Options{CaptureSlack: 5 * time.Second})
	want := []verdict{{ID: 1000, Type: api.StuckInitialEvents, Severity: api.SeverityCritical}}
	if diff := cmp.Diff(want, verdicts(r)); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
}

// TestTwoSamplesDecidedByTheEventBeingSent: the runtime's wait overstates
// a fresh block by up to a GC interval, so the event the watcher is stuck
// on decides.
func TestTwoSamplesDecidedByTheEventBeingSent(t *testing.T) {
	with := func(w api.Watcher, event string) api.Watcher {
		w.CacheWatcher, w.Event = "0xc000a0", event
		return w
	}
	for _, tc := range []struct {
		name     string
		interval time.Duration
		w1, w2   api.Watcher
		want     verdict
	}{
		{"same event a minute and more apart: stuck although the runtime shows no minute", 90 * time.Second,
			with(initialWatcher(1000, 0), "0xe1"), with(initialWatcher(1000, 0), "0xe1"), verdict{ID: 1000, Type: api.StuckInitialEvents, Severity: api.SeverityCritical}},
		{"same event, wait grew: stuck", 70 * time.Second,
			with(initialWatcher(1000, 0), "0xe1"), with(initialWatcher(1000, 1), "0xe1"), verdict{ID: 1000, Type: api.StuckInitialEvents, Severity: api.SeverityCritical}},
		{"same event only 15 s apart: not decided", 15 * time.Second,
			with(initialWatcher(1000, 0), "0xe1"), with(initialWatcher(1000, 0), "0xe1"), verdict{ID: 1000, Type: api.SlowInitialEvents, Severity: api.SeverityWarning}},
		{"another event although the runtime shows a minute: progressing", 70 * time.Second,
			with(initialWatcher(1000, 1), "0xe1"), with(initialWatcher(1000, 1), "0xe2"), verdict{ID: 1000, Type: api.SlowInitialEvents, Severity: api.SeverityInfo}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s1, s2 := sample(t0, []api.Watcher{tc.w1}), sample(t0.Add(tc.interval), []api.Watcher{tc.w2})
			s1.Requests, s2.Requests = nil, nil
			r := Diagnose([]watches.Server{{Name: "s", Samples: []watches.Sample{s1, s2}}}, Options{CaptureSlack: 5 * time.Second})
			if diff := cmp.Diff([]verdict{tc.want}, verdicts(r)); diff != "" {
				t.Errorf("verdicts (-want +got):\n%s", diff)
			}
		})
	}
}
