package trace

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestObserved(t *testing.T) {
	tests := []struct {
		firstSeen, window, want time.Duration
	}{
		{0, 70 * time.Second, 70 * time.Second},
		{20 * time.Second, 70 * time.Second, 50 * time.Second},
		{70 * time.Second, 70 * time.Second, 0},
		// A goroutine first seen past a window cut short is watched for
		// no time, never a negative one.
		{80 * time.Second, 70 * time.Second, 0},
	}
	for _, tc := range tests {
		if got := (Goroutine{FirstSeen: tc.firstSeen}).Observed(tc.window); got != tc.want {
			t.Errorf("FirstSeen %v, window %v: Observed = %v, want %v", tc.firstSeen, tc.window, got, tc.want)
		}
	}
}

func TestErrorsNameTheSource(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&LimitError{Source: "https://10.0.0.1:6443", Limit: 128 << 20}, `execution trace "https://10.0.0.1:6443" exceeds 134217728 bytes`},
		{&VersionError{Source: "b/trace.out", Header: "go 1.21 trace\x00"}, `"b/trace.out" is not a Go 1.22 or later execution trace (header "go 1.21 trace\x00")`},
	}
	for _, tc := range tests {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
		wrapped := fmt.Errorf("reading: %w", tc.err)
		var le *LimitError
		var ve *VersionError
		if !errors.As(wrapped, &le) && !errors.As(wrapped, &ve) {
			t.Errorf("%T is lost when wrapped", tc.err)
		}
	}
}

// TestDefaultsHoldTheMeasuredServer: the default bounds fit a 70 s trace
// of the 22,000-goroutine server the issue measured (51 MB, three
// goroutines per stuck watch, a watch path about 30 frames deep) with
// room, and stay below the runtime's own frame limit of 128.
func TestDefaultsHoldTheMeasuredServer(t *testing.T) {
	if DefaultMaxBytes < 4*51_000_000 {
		t.Errorf("DefaultMaxBytes %d holds less than four 70 s traces of the measured server", DefaultMaxBytes)
	}
	if DefaultMaxGoroutines < 3*1000 {
		t.Errorf("DefaultMaxGoroutines %d keeps fewer than 1,000 stuck watches", DefaultMaxGoroutines)
	}
	if DefaultMaxFrames < 30 || DefaultMaxFrames > 128 {
		t.Errorf("DefaultMaxFrames %d: want the watch path's 30 frames, at most the runtime's 128", DefaultMaxFrames)
	}
}
