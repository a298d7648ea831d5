package exporter

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
)

var seedRepro = filepath.Join("..", "..", "testdata", "kube-apiserver-v1.37.2", "seed-repro")

// lookedAt is the fake clock's time: a second after the t1 capture.
var lookedAt = time.Date(2026, 11, 29, 10, 23, 10, 0, time.UTC)

// newTest starts a fake API server serving captures, listed by its own
// EndpointSlices, and an exporter reading it with token.
func newTest(t testing.TB, token string, captures ...string) (*Exporter, *fakeapiserver.Server, *testingclock.FakeClock, *bytes.Buffer) {
	t.Helper()
	s := fakeapiserver.Start(t, captures...)
	s.Endpoints = []string{s.Address()}
	clk := testingclock.NewFakeClock(lookedAt)
	logs := &bytes.Buffer{}
	e, err := New(Config{
		Live:     model.Config{REST: fakeapiserver.RESTConfig(t, s, token), RequestTimeout: 10 * time.Second},
		Interval: 30 * time.Second, Jitter: 0.1, Clock: clk,
		Logger: slog.New(slog.NewJSONHandler(logs, nil)),
		Rand:   func() float64 { return 0.5 },
	})
	if err != nil {
		t.Fatal(err)
	}
	return e, s, clk, logs
}

func TestLookExportsTheSeedRepro(t *testing.T) {
	t.Parallel()
	e, s, _, _ := newTest(t, fakeapiserver.TokenAdmin, filepath.Join(seedRepro, "t1"), filepath.Join(seedRepro, "t2"))
	if !e.LookOnce(context.Background()) {
		t.Fatal("the look read nothing")
	}
	inst := s.Address()
	at := float64(lookedAt.Unix())
	// slow-informer started 10:22:03.339215169 and paced-reader
	// 10:22:03.308909537; the server's clock (Date) said 10:23:09. Both
	// hold 1 seat of global-default (limit 49). Between the look's two
	// /metrics (t1, then t2) the server paused 7 more times, 0.0315 s.
	want := fmt.Sprintf(`
# HELP watchdoctor_initializing_watch_oldest_age_seconds Age of the oldest watch request still initializing, per resource and priority level.
# TYPE watchdoctor_initializing_watch_oldest_age_seconds gauge
watchdoctor_initializing_watch_oldest_age_seconds{apiserver=%[1]q,priority_level="global-default",resource="pods"} 65.691090463
# HELP watchdoctor_initializing_watches Watch requests executing in APF (still sending their initial events), per resource and priority level.
# TYPE watchdoctor_initializing_watches gauge
watchdoctor_initializing_watches{apiserver=%[1]q,priority_level="global-default",resource="pods"} 2
# HELP watchdoctor_initializing_watch_seats APF seats held by initializing watch requests, per priority level.
# TYPE watchdoctor_initializing_watch_seats gauge
watchdoctor_initializing_watch_seats{apiserver=%[1]q,priority_level="catch-all"} 0
watchdoctor_initializing_watch_seats{apiserver=%[1]q,priority_level="exempt"} 0
watchdoctor_initializing_watch_seats{apiserver=%[1]q,priority_level="global-default"} 2
watchdoctor_initializing_watch_seats{apiserver=%[1]q,priority_level="leader-election"} 0
watchdoctor_initializing_watch_seats{apiserver=%[1]q,priority_level="node-high"} 0
watchdoctor_initializing_watch_seats{apiserver=%[1]q,priority_level="system"} 0
watchdoctor_initializing_watch_seats{apiserver=%[1]q,priority_level="workload-high"} 0
watchdoctor_initializing_watch_seats{apiserver=%[1]q,priority_level="workload-low"} 0
# HELP watchdoctor_priority_level_seat_limit The priority level's seat limit (apiserver_flowcontrol_nominal_limit_seats).
# TYPE watchdoctor_priority_level_seat_limit gauge
watchdoctor_priority_level_seat_limit{apiserver=%[1]q,priority_level="catch-all"} 13
watchdoctor_priority_level_seat_limit{apiserver=%[1]q,priority_level="exempt"} 0
watchdoctor_priority_level_seat_limit{apiserver=%[1]q,priority_level="global-default"} 49
watchdoctor_priority_level_seat_limit{apiserver=%[1]q,priority_level="leader-election"} 25
watchdoctor_priority_level_seat_limit{apiserver=%[1]q,priority_level="node-high"} 98
watchdoctor_priority_level_seat_limit{apiserver=%[1]q,priority_level="system"} 74
watchdoctor_priority_level_seat_limit{apiserver=%[1]q,priority_level="workload-high"} 98
watchdoctor_priority_level_seat_limit{apiserver=%[1]q,priority_level="workload-low"} 245
# HELP watchdoctor_user_initializing_seats APF seats held by the initializing watches of the top users, per resource; the rest in user="other".
# TYPE watchdoctor_user_initializing_seats gauge
watchdoctor_user_initializing_seats{apiserver=%[1]q,resource="pods",user="paced-reader"} 1
watchdoctor_user_initializing_seats{apiserver=%[1]q,resource="pods",user="slow-informer"} 1
# HELP watchdoctor_user_oldest_initializing_age_seconds Age of the oldest initializing watch of the top users, per resource; the rest in user="other".
# TYPE watchdoctor_user_oldest_initializing_age_seconds gauge
watchdoctor_user_oldest_initializing_age_seconds{apiserver=%[1]q,resource="pods",user="paced-reader"} 65.691090463
watchdoctor_user_oldest_initializing_age_seconds{apiserver=%[1]q,resource="pods",user="slow-informer"} 65.660784831
# HELP watchdoctor_watches_by_state Initializing watches by what the look decided: stuck, progressing, undecided (stuck only when nothing is undecided).
# TYPE watchdoctor_watches_by_state gauge
watchdoctor_watches_by_state{apiserver=%[1]q,state="progressing"} 0
watchdoctor_watches_by_state{apiserver=%[1]q,state="undecided"} 2
# HELP watchdoctor_last_look_success 1 when every fetch of the last look of the instance answered, else 0.
# TYPE watchdoctor_last_look_success gauge
watchdoctor_last_look_success{apiserver=%[1]q} 1
# HELP watchdoctor_last_look_timestamp_seconds When the last look of the instance ended, as a Unix time.
# TYPE watchdoctor_last_look_timestamp_seconds gauge
watchdoctor_last_look_timestamp_seconds{apiserver=%[1]q} %[2]g
# HELP watchdoctor_last_look_server_pause_seconds Non-GC stop-the-world time of the API server during the last look (go_sched_pauses_total_other_seconds before and after it): what the look cost, at most.
# TYPE watchdoctor_last_look_server_pause_seconds gauge
watchdoctor_last_look_server_pause_seconds{apiserver=%[1]q} 0.03147289600000001
# HELP watchdoctor_looks_total Looks of every instance, by result: ok when at least one instance was read.
# TYPE watchdoctor_looks_total counter
watchdoctor_looks_total{result="failed"} 0
watchdoctor_looks_total{result="ok"} 1
# HELP watchdoctor_last_complete_look_timestamp_seconds When the last look that read at least one instance ended, as a Unix time; 0 before the first.
# TYPE watchdoctor_last_complete_look_timestamp_seconds gauge
watchdoctor_last_complete_look_timestamp_seconds %[2]g
`, inst, at)
	names := []string{"watchdoctor_initializing_watch_oldest_age_seconds", "watchdoctor_initializing_watches", "watchdoctor_initializing_watch_seats", "watchdoctor_priority_level_seat_limit",
		"watchdoctor_user_initializing_seats", "watchdoctor_user_oldest_initializing_age_seconds", "watchdoctor_watches_by_state",
		"watchdoctor_last_look_success", "watchdoctor_last_look_timestamp_seconds", "watchdoctor_last_look_server_pause_seconds",
		"watchdoctor_looks_total", "watchdoctor_last_complete_look_timestamp_seconds", "watchdoctor_look_errors_total"}
	if err := testutil.GatherAndCompare(e.Registry(), strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}
	for _, p := range s.Requests() {
		if strings.Contains(p, "debug=2") {
			t.Errorf("the look took a debug=2 dump: %s", p)
		}
	}
	if !slices.Contains(s.Requests(), "/debug/pprof/goroutine?debug=1") {
		t.Errorf("the look did not read the debug=1 profile: %q", s.Requests())
	}
}

func TestDiscoveryFailureKeepsInstancesFailed(t *testing.T) {
	t.Parallel()
	e, s, _, _ := newTest(t, fakeapiserver.TokenAdmin, filepath.Join(seedRepro, "t1"))
	if !e.LookOnce(context.Background()) {
		t.Fatal("first look read nothing")
	}
	s.Close() // the API server is gone: discovery fails
	if e.LookOnce(context.Background()) {
		t.Fatal("a look of a closed server counted as ok")
	}
	want := fmt.Sprintf(`
# HELP watchdoctor_look_errors_total Errors of the looks, by kind.
# TYPE watchdoctor_look_errors_total counter
watchdoctor_look_errors_total{apiserver=%[1]q,kind="discovery"} 1
# HELP watchdoctor_last_look_success 1 when every fetch of the last look of the instance answered, else 0.
# TYPE watchdoctor_last_look_success gauge
watchdoctor_last_look_success{apiserver=%[1]q} 0
`, s.Address())
	// The stale ages are gone, so "initializing too long" cannot fire on
	// them; the failing instance's success is 0.
	if err := testutil.GatherAndCompare(e.Registry(), strings.NewReader(want), "watchdoctor_look_errors_total", "watchdoctor_last_look_success", "watchdoctor_initializing_watch_oldest_age_seconds"); err != nil {
		t.Error(err)
	}
	if !e.Ready() {
		t.Error("readiness lost after a failed look: it says a look completed once")
	}
}

func TestRunLooksEveryIntervalAndServes(t *testing.T) {
	t.Parallel()
	e, _, clk, _ := newTest(t, fakeapiserver.TokenAdmin, filepath.Join(seedRepro, "t1"))
	h := httptest.NewServer(e.Handler())
	defer h.Close()
	if code := get(t, h.URL+"/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz before a look: %d, want 503", code)
	}
	if code := get(t, h.URL+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz: %d, want 200", code)
	}
	looked := make(chan int)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- e.Run(ctx, func(n int, ok bool) { looked <- n }) }()
	if n := <-looked; n != 1 {
		t.Fatalf("look %d first", n)
	}
	if code := get(t, h.URL+"/readyz"); code != http.StatusOK {
		t.Errorf("/readyz after a look: %d, want 200", code)
	}
	clk.Step(30 * time.Second) // Rand 0.5: no jitter
	if n := <-looked; n != 2 {
		t.Fatalf("look %d second", n)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	body := getBody(t, h.URL+"/metrics")
	for _, want := range []string{`watchdoctor_looks_total{result="ok"} 2`, "go_goroutines ", "process_resident_memory_bytes "} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(body, "promhttp_metric_handler_requests_total") {
		t.Error("/metrics serves the global default registry's handler metrics")
	}
}
