package exporter

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/watch-doctor/watch-doctor/internal/watches"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
)

// closureSample is one look's sample: apiserver_terminated_watchers_total
// of configmaps at terminated, and the APF dump's executing watches of
// configmaps, one per user, started at the times given.
func closureSample(at time.Time, terminated float64, starts map[string]time.Time) watches.Sample {
	start := 1.7e9
	rs := &apf.Requests{HasDetails: true}
	for user, st := range starts {
		rs.Requests = append(rs.Requests, apf.Request{PriorityLevel: "global-default", FlowSchema: "global-default", IndexInQueue: -1,
			StartTime: st, InitialSeats: 8, User: user, Verb: "watch", Path: "/api/v1/namespaces/ns/configmaps", Namespace: "ns", Resource: "configmaps"})
	}
	return watches.Sample{CapturedAt: at, Requests: rs, Metrics: &watches.MetricsContext{ProcessStartTime: &start,
		TerminatedWatchers: map[string]float64{"/configmaps": terminated}}}
}

// Between looks, serve counts what the server closed per resource and by
// the client tied: its user, "ambiguous" when several came back,
// "unknown" when none; a client watching throughout is never counted.
func TestServeCountsClosuresBetweenLooks(t *testing.T) {
	logs := &bytes.Buffer{}
	e, err := New(Config{Interval: 30 * time.Second, TopUsers: 1, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 5, 14, 0, 0, 0, time.UTC)
	fast := t0.Add(-time.Hour)
	looks := []watches.Sample{
		closureSample(t0, 0, map[string]time.Time{"fast": fast}),
		closureSample(t0.Add(30*time.Second), 2, map[string]time.Time{"fast": fast, "slow": t0.Add(25 * time.Second)}),
		closureSample(t0.Add(60*time.Second), 3, map[string]time.Time{"slow": t0.Add(55 * time.Second), "other": t0.Add(50 * time.Second)}),
		closureSample(t0.Add(90*time.Second), 4, nil),
		closureSample(t0.Add(120*time.Second), 5, map[string]time.Time{"third": t0.Add(100 * time.Second)}),
	}
	for _, s := range looks {
		e.closuresSince("apiserver-1", s)
	}
	want := `
# HELP watchdoctor_watch_closures_by_client_total The closures of watchdoctor_watch_closures_total by the client tied to them: its user, "ambiguous" when several came back, "unknown" when none could be tied.
# TYPE watchdoctor_watch_closures_by_client_total counter
watchdoctor_watch_closures_by_client_total{apiserver="apiserver-1",resource="configmaps",user="ambiguous"} 1
watchdoctor_watch_closures_by_client_total{apiserver="apiserver-1",resource="configmaps",user="other"} 1
watchdoctor_watch_closures_by_client_total{apiserver="apiserver-1",resource="configmaps",user="slow"} 2
watchdoctor_watch_closures_by_client_total{apiserver="apiserver-1",resource="configmaps",user="unknown"} 1
# HELP watchdoctor_watch_closures_total Watchers the API server closed for not keeping up (growth of apiserver_terminated_watchers_total between looks of one process), per resource.
# TYPE watchdoctor_watch_closures_total counter
watchdoctor_watch_closures_total{apiserver="apiserver-1",resource="configmaps"} 5
`
	if err := testutil.GatherAndCompare(e.Registry(), strings.NewReader(want), "watchdoctor_watch_closures_total", "watchdoctor_watch_closures_by_client_total"); err != nil {
		t.Error(err)
	}
	if got := strings.Count(logs.String(), "the server closed watches for not keeping up"); got != 4 {
		t.Errorf("%d log records of closures, want 4:\n%s", got, logs)
	}
}

// A restart between looks resets the server's counter: nothing counted.
func TestServeCountsNoClosuresAcrossARestart(t *testing.T) {
	e, err := New(Config{Interval: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 5, 14, 0, 0, 0, time.UTC)
	a, b := closureSample(t0, 7, nil), closureSample(t0.Add(time.Minute), 9, nil)
	later := 1.8e9
	b.Metrics.ProcessStartTime = &later
	e.closuresSince("apiserver-1", a)
	e.closuresSince("apiserver-1", b)
	if diff := cmp.Diff(map[[2]string]float64{}, e.closures.byResource); diff != "" {
		t.Errorf("closures across a restart (-want +got):\n%s", diff)
	}
}
