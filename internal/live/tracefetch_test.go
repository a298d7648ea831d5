package live

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/watch-doctor/watch-doctor/internal/watches"
)

// The trace stops early only when at least as many initial-phase watchers
// as sample A counted were seen, and every one of them moved.
func TestStopWhenAllProgressed(t *testing.T) {
	tests := []struct {
		min                 int
		initial, progressed int
		want                bool
	}{
		{2, 2, 2, true},
		{2, 2, 1, false},
		{2, 1, 1, false},
		{0, 0, 0, false},
		{0, 3, 3, true},
	}
	for _, tt := range tests {
		got := stopWhenAllProgressed(tt.min)(watches.TraceProgress{Initial: tt.initial, Progressed: tt.progressed})
		if got != tt.want {
			t.Errorf("min %d, %d initial, %d progressed: stop %v, want %v", tt.min, tt.initial, tt.progressed, got, tt.want)
		}
	}
}

func TestWindowText(t *testing.T) {
	cut := errors.New("unexpected EOF")
	summary := func(stopped bool) *watches.Trace {
		return &watches.Trace{Window: 9*time.Second + 600*time.Millisecond, Bytes: 3 << 19, StoppedEarly: stopped}
	}
	cfg := Config{Interval: 30 * time.Second, Trace: TraceConfig{Budget: 64 << 20}}
	hinted := cfg
	hinted.Hints.TraceBudget = "--trace-budget"
	for _, tc := range []struct {
		name string
		tr   *TraceResult
		cfg  Config
		want string
	}{
		{"unread", &TraceResult{Err: cut}, cfg, "nothing proven: unexpected EOF"},
		{"whole", &TraceResult{Summary: summary(false)}, cfg, "the trace covers 10s (1.5 MiB)"},
		{"stopped early", &TraceResult{Summary: summary(true)}, cfg, "the trace covers 10s (1.5 MiB); stopped early after 10s: every initial-phase watcher had progressed"},
		{"interrupted", &TraceResult{Summary: summary(true), interrupted: true}, cfg, "the trace covers 10s (1.5 MiB); interrupted after 10s"},
		{"cut short", &TraceResult{Summary: summary(false), Err: cut}, cfg, "the trace covers 10s (1.5 MiB); the trace was cut short, so only the 10s read count: unexpected EOF"},
		{"budget", &TraceResult{Summary: summary(false), BudgetCut: true}, cfg, "the trace covers 10s (1.5 MiB); the trace budget of 64.0 MiB cut the 30s interval"},
		{"budget, hint", &TraceResult{Summary: summary(false), BudgetCut: true}, hinted, "the trace covers 10s (1.5 MiB); the trace budget of 64.0 MiB cut the 30s interval (--trace-budget)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, windowText(tc.tr, tc.cfg)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestCutText(t *testing.T) {
	if got := cutText(false, time.Minute); got != "" {
		t.Errorf("cutText(false) = %q, want none", got)
	}
	if got, want := cutText(true, time.Minute), ", which cuts the 1m0s interval"; got != want {
		t.Errorf("cutText(true) = %q, want %q", got, want)
	}
}
