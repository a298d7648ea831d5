package live

import (
	"context"
	"strings"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	"github.com/watch-doctor/watch-doctor/internal/live/tracefetch"
)

// TestEveryPieceOfEvidenceIsOfTheProcessItClaimsATraceIgnoringSeconds: a
// server that ignores seconds= and keeps the trace open is cut at the
// window plus the margin, not read until the request deadline (here a
// minute), and the error says so.
func TestEveryPieceOfEvidenceIsOfTheProcessItClaimsATraceIgnoringSeconds(t *testing.T) {
	s := hostileServer(t, "/debug/pprof/trace", &fakeapiserver.Hostility{Kind: fakeapiserver.Stall, Body: "go 1.26 trace\x00\x00\x00"})
	cfg := hostileConfig(t, s)
	cfg.Trace = model.TraceConfig{Margin: 200 * time.Millisecond}
	cfg.Clock = testingclock.NewFakeClock(time.Now())
	c, err := cfg.ClientFor(model.Instance{Name: "api", Address: s.Address(), Pinned: true})
	if err != nil {
		t.Fatal(err)
	}
	ts := tracefetch.TraceStream{Cfg: cfg, C: c, Window: 100 * time.Millisecond, MaxBytes: 1 << 20}
	_, _, err = ts.Run(context.Background())
	const want = "timed out after 300ms while reading the response (the trace's window of 100ms plus a margin of 200ms: a server still sending then ignores seconds=, and is cut)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v\nwant one containing %q", err, want)
	}
}
