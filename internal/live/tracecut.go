package live

import (
	"fmt"
	"time"
)

// DefaultTraceMargin is how long past its window a trace may take to
// arrive: net/http/pprof's Trace stops the tracer once the window has
// passed and the rest is a flush, so a server still sending after this
// ignores seconds= and is cut, not read until the request deadline.
const DefaultTraceMargin = 10 * time.Second

func (t TraceConfig) margin() time.Duration {
	if t.Margin <= 0 {
		return DefaultTraceMargin
	}
	return t.Margin
}

// traceDeadline is the deadline of a trace request of window, and the
// hint its timeout error carries: the window plus the margin, the margin
// no longer than the request timeout (timeout, 0 for none).
func traceDeadline(cfg Config, window, timeout time.Duration, hint string) (time.Duration, string) {
	margin := cfg.Trace.margin()
	if timeout > 0 && timeout < margin {
		return window + timeout, hint
	}
	return window + margin, fmt.Sprintf("the trace's window of %s plus a margin of %s: a server still sending then ignores seconds=, and is cut", window, margin)
}
