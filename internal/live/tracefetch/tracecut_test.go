package tracefetch

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

func TestTraceDeadline(t *testing.T) {
	for _, tc := range []struct {
		margin, timeout, want time.Duration
	}{
		{0, time.Minute, 70*time.Second + model.DefaultTraceMargin},
		{time.Second, time.Minute, 71 * time.Second},
		{0, 2 * time.Second, 72 * time.Second},
		{0, 0, 70*time.Second + model.DefaultTraceMargin},
	} {
		got, _ := traceDeadline(model.Config{Trace: model.TraceConfig{Margin: tc.margin}}, 70*time.Second, tc.timeout, "")
		if got != tc.want {
			t.Errorf("margin %s, timeout %s: %s, want %s", tc.margin, tc.timeout, got, tc.want)
		}
	}
}

// TestEveryPieceOfEvidenceIsOfTheProcessItClaimsATraceIgnoringSeconds: a
// server that ignores seconds= and keeps the trace open is cut at the
// window plus the margin, not read until the request deadline (here a
// minute), and the error says so.
func TestEveryPieceOfEvidenceIsOfTheProcessItClaimsATraceIgnoringSeconds(t *testing.T) {
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	s.Hostile = map[string]*fakeapiserver.Hostility{"/debug/pprof/trace": {Kind: fakeapiserver.Stall, Body: "go 1.26 trace\x00\x00\x00"}}
	cfg := model.Config{REST: fakeapiserver.RESTConfig(t, s, fakeapiserver.TokenAdmin), RequestTimeout: time.Minute, Clock: testingclock.NewFakeClock(time.Now())}
	cfg.Trace = model.TraceConfig{Margin: 200 * time.Millisecond}
	c, err := cfg.ClientFor(model.Instance{Name: "api", Address: s.Address(), Pinned: true})
	if err != nil {
		t.Fatal(err)
	}
	ts := TraceStream{Cfg: cfg, C: c, Window: 100 * time.Millisecond, MaxBytes: 1 << 20}
	_, _, err = ts.Run(context.Background())
	const want = "timed out after 300ms while reading the response (the trace's window of 100ms plus a margin of 200ms: a server still sending then ignores seconds=, and is cut)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v\nwant one containing %q", err, want)
	}
}
