package harm

import (
	"math"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/live/model"
)

func TestGoroutinesText(t *testing.T) {
	t.Parallel()
	if got := GoroutinesText(math.NaN()); got != "go_goroutines not read" {
		t.Errorf("GoroutinesText(NaN) = %q", got)
	}
	if got := GoroutinesText(1234); got != "go_goroutines 1234" {
		t.Errorf("GoroutinesText(1234) = %q", got)
	}
}

func TestWithoutTrace(t *testing.T) {
	t.Parallel()
	if got := WithoutTrace(model.Config{}); got != "sample 2 decides as without one" {
		t.Errorf("WithoutTrace(auto) = %q", got)
	}
	traced := model.Config{Trace: model.TraceConfig{Evidence: model.EvidenceTrace}}
	if got, want := WithoutTrace(traced), "sample 2 takes no goroutine dump either (the evidence chosen is an execution trace): watches it cannot decide stay undecided"; got != want {
		t.Errorf("WithoutTrace(trace) = %q, want %q", got, want)
	}
	if got := refusedDump(traced, "a", CheapLook{Goroutines: 10}); got == nil || got.Refused == "" || got.Instance != "a" {
		t.Errorf("refusedDump(trace) = %+v, want the dump withheld as refused", got)
	}
	if got := refusedDump(model.Config{Force: true, Trace: traced.Trace}, "a", CheapLook{Goroutines: 10}); got != nil {
		t.Errorf("refusedDump(force) = %+v, want nil", got)
	}
}
