package exporter

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	testingclock "k8s.io/utils/clock/testing"

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

// Between looks, serve counts what the server closed per resource at
// once, and by the client tied: its user, "ambiguous" when several came
// back; closures no look tied yet wait for a later look to see the client
// back (it drains first), and count as "unknown" past the hold. A client
// watching throughout is never counted.
func TestServeCountsClosuresBetweenLooks(t *testing.T) {
	logs := &bytes.Buffer{}
	t0 := time.Date(2026, 12, 5, 14, 0, 0, 0, time.UTC)
	clk := testingclock.NewFakeClock(t0)
	e, err := New(Config{Interval: 30 * time.Second, TopUsers: 2, Clock: clk, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	fast := t0.Add(-time.Hour)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	looks := []watches.Sample{
		closureSample(at(0), 0, map[string]time.Time{"fast": fast}),
		// Tied at once: slow came back before this look.
		closureSample(at(30), 2, map[string]time.Time{"fast": fast, "slow": at(25)}),
		// Two came back: ambiguous.
		closureSample(at(60), 3, map[string]time.Time{"slow": at(55), "other": at(50)}),
		// Nobody back yet: held; the next look sees late back, started
		// after the look before the closure.
		closureSample(at(90), 4, nil),
		closureSample(at(120), 4, map[string]time.Time{"late": at(100), "third": at(50)}),
		// Held from 150 s, and nobody back before the hold (3 minutes):
		// unknown at the look of 330 s.
		closureSample(at(150), 5, nil),
	}
	for s := 180; s <= 330; s += 30 {
		looks = append(looks, closureSample(at(s), 5, map[string]time.Time{"fast": fast}))
	}
	wantHeld := map[int]int{90: 1, 150: 1, 180: 1, 300: 1, 330: 0}
	for _, s := range looks {
		clk.SetTime(s.CapturedAt)
		e.closuresSince("apiserver-1", s)
		if want, ok := wantHeld[int(s.CapturedAt.Sub(t0).Seconds())]; ok {
			if got := len(e.closures.held); got != want {
				t.Errorf("at %v: %d resources held, want %d", s.CapturedAt.Sub(t0), got, want)
			}
		}
	}
	want := `
# HELP watchdoctor_watch_closures_by_client_total The closures of watchdoctor_watch_closures_total by the client tied to them: its user, "ambiguous" when several came back, "unknown" when none could be tied.
# TYPE watchdoctor_watch_closures_by_client_total counter
watchdoctor_watch_closures_by_client_total{apiserver="apiserver-1",resource="configmaps",user="ambiguous"} 1
watchdoctor_watch_closures_by_client_total{apiserver="apiserver-1",resource="configmaps",user="late"} 1
watchdoctor_watch_closures_by_client_total{apiserver="apiserver-1",resource="configmaps",user="slow"} 2
watchdoctor_watch_closures_by_client_total{apiserver="apiserver-1",resource="configmaps",user="unknown"} 1
# HELP watchdoctor_watch_closures_total Watchers the API server closed for not keeping up (growth of apiserver_terminated_watchers_total between looks of one process), per resource.
# TYPE watchdoctor_watch_closures_total counter
watchdoctor_watch_closures_total{apiserver="apiserver-1",resource="configmaps"} 5
`
	if err := testutil.GatherAndCompare(e.Registry(), strings.NewReader(want), "watchdoctor_watch_closures_total", "watchdoctor_watch_closures_by_client_total"); err != nil {
		t.Error(err)
	}
	for msg, want := range map[string]int{"the server closed watches for not keeping up": 4, "closed watches counted by client": 4} {
		if got := strings.Count(logs.String(), msg); got != want {
			t.Errorf("%d log records %q, want %d:\n%s", got, msg, want, logs)
		}
	}
}

// Closures held when the server restarts can no longer be tied (its
// counters start again): they count as "unknown" at the first look of the
// new process, and nothing is counted across the restart.
func TestServeCountsHeldClosuresAcrossARestart(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 14, 0, 0, 0, time.UTC)
	clk := testingclock.NewFakeClock(t0)
	e, err := New(Config{Interval: 30 * time.Second, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	later := 1.8e9
	restarted := closureSample(t0.Add(time.Minute), 1, map[string]time.Time{"slow": t0.Add(55 * time.Second)})
	restarted.Metrics.ProcessStartTime = &later
	for _, s := range []watches.Sample{closureSample(t0, 7, nil), closureSample(t0.Add(30*time.Second), 9, nil), restarted} {
		clk.SetTime(s.CapturedAt)
		e.closuresSince("apiserver-1", s)
	}
	want := map[closureKey]float64{{"apiserver-1", "configmaps", UserUnknown}: 2}
	if diff := cmp.Diff(want, e.closures.byClient); diff != "" {
		t.Errorf("closures by client (-want +got):\n%s", diff)
	}
	if len(e.closures.held) != 0 {
		t.Errorf("closures still held after the restart: %v", e.closures.held)
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
