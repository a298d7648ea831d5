package model

import (
	"testing"
	"time"

	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

func TestEstimateKnownAndCut(t *testing.T) {
	t.Parallel()
	if (Estimate{}).Known() {
		t.Error("the zero Estimate is known")
	}
	if e := (Estimate{Basis: "go_goroutines 10", Bytes: stacks.MaxDumpBytes}); !e.Known() || e.Cut() {
		t.Errorf("%+v: want known, not cut at exactly the runtime's bound", e)
	}
	if e := (Estimate{Basis: "go_goroutines 1e6", Bytes: stacks.MaxDumpBytes + 1}); !e.Cut() {
		t.Errorf("%+v: want cut", e)
	}
}

func TestRoundPause(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want time.Duration }{
		{1234567 * time.Nanosecond, time.Millisecond},
		{2345 * time.Millisecond, 2300 * time.Millisecond},
	} {
		if got := RoundPause(tt.in); got != tt.want {
			t.Errorf("RoundPause(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
