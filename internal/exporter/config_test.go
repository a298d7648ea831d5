package exporter

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestWaitBacksOffAndJitters(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		failures int
		rand     float64
		want     time.Duration
	}{
		{"no failure, middle of the jitter", 0, 0.5, 30 * time.Second},
		{"no failure, shortest", 0, 0, 27 * time.Second},
		{"no failure, longest", 0, 1, 33 * time.Second},
		{"one failure doubles", 1, 0.5, 60 * time.Second},
		{"three failures", 3, 0.5, 240 * time.Second},
		{"capped at MaxBackoff", 10, 0.5, 5 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Config{Interval: 30 * time.Second, Jitter: 0.1, Rand: func() float64 { return tc.rand }}
			c.setDefaults()
			if diff := cmp.Diff(tc.want, c.wait(tc.failures)); diff != "" {
				t.Errorf("wait (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"defaults", Config{}, ""},
		{"trace", Config{Trace: TraceConfig{Window: 30 * time.Second, Every: 10 * time.Minute, Budget: 64 << 20}}, ""},
		{"trace with the default spacing", Config{Trace: TraceConfig{Window: 30 * time.Second}}, ""},
		{"jitter", Config{Jitter: 1}, "invalid jitter 1: want at least 0 and below 1"},
		{"negative window", Config{Trace: TraceConfig{Window: -time.Second}}, "invalid trace window -1s, budget 0 or spacing 0s: must not be negative"},
		{"spacing below the window", Config{Trace: TraceConfig{Window: time.Minute, Every: 30 * time.Second}}, "invalid trace spacing 30s: must be at least the trace window 1m0s"},
		{"negative bounds", Config{TopUsers: -1}, "invalid bounds: top users -1, resources 0, levels 0, instances 0: must not be negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if err := tc.cfg.Validate(); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetDefaultsTraceEvery(t *testing.T) {
	t.Parallel()
	c := Config{Trace: TraceConfig{Window: 30 * time.Second}}
	c.setDefaults()
	if diff := cmp.Diff(TraceConfig{Window: 30 * time.Second, Every: DefaultTraceEvery}, c.Trace); diff != "" {
		t.Errorf("trace config (-want +got):\n%s", diff)
	}
}
