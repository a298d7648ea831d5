package exporter

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	"github.com/watch-doctor/watch-doctor/internal/watches"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/metrics"
)

func TestLookOfAFailingServerCountsErrorsByKind(t *testing.T) {
	t.Parallel()
	e, s, _, logs := newTest(t, fakeapiserver.TokenAdmin, filepath.Join(seedRepro, "t1"))
	s.Fail = true
	if e.LookOnce(context.Background()) {
		t.Fatal("a look of a server answering 500 to everything counted as ok")
	}
	if e.Ready() {
		t.Error("ready after a look that read nothing")
	}
	want := fmt.Sprintf(`
# HELP watchdoctor_look_errors_total Errors of the looks, by kind.
# TYPE watchdoctor_look_errors_total counter
watchdoctor_look_errors_total{apiserver=%[1]q,kind="http_status"} 4
# HELP watchdoctor_last_look_success 1 when every fetch of the last look of the instance answered, else 0.
# TYPE watchdoctor_last_look_success gauge
watchdoctor_last_look_success{apiserver=%[1]q} 0
# HELP watchdoctor_looks_total Looks of every instance, by result: ok when at least one instance was read.
# TYPE watchdoctor_looks_total counter
watchdoctor_looks_total{result="failed"} 1
watchdoctor_looks_total{result="ok"} 0
# HELP watchdoctor_last_complete_look_timestamp_seconds When the last look that read at least one instance ended, as a Unix time; 0 before the first.
# TYPE watchdoctor_last_complete_look_timestamp_seconds gauge
watchdoctor_last_complete_look_timestamp_seconds 0
`, s.Address())
	if err := testutil.GatherAndCompare(e.Registry(), strings.NewReader(want), "watchdoctor_look_errors_total", "watchdoctor_last_look_success", "watchdoctor_looks_total", "watchdoctor_last_complete_look_timestamp_seconds", "watchdoctor_initializing_watches"); err != nil {
		t.Error(err)
	}
	if !strings.Contains(logs.String(), `"level":"WARN","msg":"look error","apiserver":"`+s.Address()+`","kind":"http_status"`) {
		t.Errorf("no structured warning for the failed fetches:\n%s", logs)
	}
}

func TestKindOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"forbidden", &model.ForbiddenError{Instance: "a"}, KindForbidden},
		{"profiling disabled", &model.ProfilingDisabledError{Instance: "a"}, KindProfilingDisabled},
		{"timeout", context.DeadlineExceeded, KindTimeout},
		{"http", &model.HTTPError{Instance: "a", Status: 500}, KindHTTP},
		{"pause", &pauseError{errors.New("bad histogram")}, KindPause},
		{"trace", &traceError{kind: KindTraceBusy, err: &model.TraceBusyError{Instance: "a"}}, KindTraceBusy},
		{"wrapped trace", fmt.Errorf("x: %w", &traceError{kind: KindTraceCut, err: errors.New("eof")}), KindTraceCut},
		{"other", errors.New("?"), KindOther},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, kindOf(tc.err)); diff != "" {
				t.Errorf("kind (-want +got):\n%s", diff)
			}
		})
	}
}

// decided counts progressing by age alone without a profile, and leaves
// stuck out while anything is undecided.
func TestDecidedWithoutAProfile(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	rs := &apf.Requests{HasDetails: true, Requests: []apf.Request{
		watchReq("young", "global-default", "/api/v1/pods", "pods", 1, at.Add(-10*time.Second)),
		watchReq("old", "global-default", "/api/v1/pods", "pods", 1, at.Add(-40*time.Second)),
	}}
	for _, tc := range []struct {
		name string
		s    watches.Sample
		read bool
		want map[string]int
	}{
		{"not read", watches.Sample{Requests: rs, CapturedAt: at}, false, nil},
		{"one young, one past the bound", watches.Sample{Requests: rs, CapturedAt: at}, true, map[string]int{StateProgressing: 1, StateUndecided: 1}},
		{"no capture time: nothing decided", watches.Sample{Requests: rs}, true, map[string]int{StateProgressing: 0, StateUndecided: 2}},
		{"none initializing", watches.Sample{Requests: &apf.Requests{HasDetails: true}, CapturedAt: at}, true, map[string]int{StateProgressing: 0, StateUndecided: 0, StateStuck: 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, decided(&api.Report{}, "a", tc.s, tc.read)); diff != "" {
				t.Errorf("states (-want +got):\n%s", diff)
			}
		})
	}
}

// A server without /debug/pprof (404: profiling off; 403: RBAC) is still
// looked at through its APF dump and /metrics: its watches initializing
// past the stall bound are exported undecided, never progressing, and the
// stuck count is left out (unknown).
func TestLookWithoutProfiling(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		set  func(*fakeapiserver.Server)
	}{
		{"profiling off (404)", func(s *fakeapiserver.Server) { s.NoProfiling = true }},
		{"RBAC refuses /debug/pprof (403)", func(s *fakeapiserver.Server) { s.ForbidProfiling = true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, s, _, _ := newTest(t, fakeapiserver.TokenAdmin, filepath.Join(seedRepro, "t2"))
			tc.set(s)
			if !e.LookOnce(context.Background()) {
				t.Fatal("the look read nothing: the APF dump and /metrics are served")
			}
			want := map[string]float64{StateProgressing: 0, StateUndecided: 2}
			if diff := cmp.Diff(want, states(t, e, s.Address())); diff != "" {
				t.Errorf("states (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPauseReadingsKeepThePauseHistogramAlone: the reads after a look
// keep, of each instance's /metrics, the pause histogram as the whole
// /metrics has it; other kinds and other families are not kept.
func TestPauseReadingsKeepThePauseHistogramAlone(t *testing.T) {
	t.Parallel()
	path := filepath.Join(seedRepro, "t1", "metrics.txt")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := metrics.Parse(strings.NewReader(string(b)), path)
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := metrics.SchedPauses(whole)
	if err != nil {
		t.Fatal(err)
	}
	p := pauseReadings{}
	if err := p.Store("a", 1, api.FileAPFLevels, strings.NewReader("levels")); err != nil {
		t.Fatal(err)
	}
	if err := p.Store("b", 1, api.FileMetrics, strings.NewReader(string(b))); err != nil {
		t.Fatal(err)
	}
	if len(p) != 1 || p["b"] == nil {
		t.Fatalf("readings of %d instances, want b's alone", len(p))
	}
	if diff := cmp.Diff([]string{metrics.SchedPausesStoppingOther, metrics.SchedPausesOther}, p["b"].FamilyNames()); diff != "" {
		t.Errorf("families kept (-want +got):\n%s", diff)
	}
	got, ok, err := metrics.SchedPauses(p["b"])
	if !ok || err != nil {
		t.Fatalf("ok %v, err %v", ok, err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pauses (-whole /metrics +kept):\n%s", diff)
	}
	if err := p.Store("c", 1, api.FileMetrics, strings.NewReader("<html>502</html>\n")); err == nil {
		t.Error("an HTML page stored as /metrics without an error")
	}
}
