package tracefetch

import (
	"testing"
	"time"

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
