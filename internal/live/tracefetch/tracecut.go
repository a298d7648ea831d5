package tracefetch

import (
	"fmt"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/live/model"
)

// traceDeadline is the deadline of a trace request of window, and the
// hint its timeout error carries: the window plus the margin, the margin
// no longer than the request timeout (timeout, 0 for none).
func traceDeadline(cfg model.Config, window, timeout time.Duration, hint string) (time.Duration, string) {
	margin := cfg.Trace.MarginOrDefault()
	if timeout > 0 && timeout < margin {
		return window + timeout, hint
	}
	return window + margin, fmt.Sprintf("the trace's window of %s plus a margin of %s: a server still sending then ignores seconds=, and is cut", window, margin)
}
