package tracefetch

import (
	"context"
	"fmt"
	"math"

	"github.com/watch-doctor/watch-doctor/internal/live/model"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/metrics"
)

// Every piece of evidence is of the process it claims. Through the
// kubeconfig host (an instance not pinned) a load balancer may send the
// trace to another server than the samples: the process start time is
// read from /metrics on the same client right before the trace and
// right after it, and a trace whose reads disagree with sample 1's is
// set aside (TraceOtherProcessError). A trace holds no process identity
// of its own; the diagnosis checks its content against the samples too
// (internal/diagnosis traceaside.go).

// TraceOtherProcessError is a trace set aside because a /metrics read
// around it reached another process than sample 1's.
type TraceOtherProcessError struct {
	Instance string
	// Sample, Before and After are process_start_time_seconds of sample
	// 1 and of the reads right before and after the trace; NaN when not
	// read.
	Sample, Before, After float64
}

func (e *TraceOtherProcessError) Error() string {
	return fmt.Sprintf("%s: the execution trace was set aside, nothing is decided from it: process_start_time_seconds was %s in sample 1, %s right before the trace and %s right after it: through the load balancer the trace may come from another API server process", e.Instance, startText(e.Sample), startText(e.Before), startText(e.After))
}

func startText(v float64) string {
	if math.IsNaN(v) {
		return "not read"
	}
	return fmt.Sprintf("%.0f", v)
}

// verifiesTraceProcess reports whether the trace of c needs its process
// checked: the instance is not pinned, and /metrics may be read.
func verifiesTraceProcess(cfg model.Config, c *model.Client) bool {
	return !c.Inst.Pinned && cfg.Wants(api.FileMetrics)
}

// processStart reads process_start_time_seconds from /metrics of c; NaN
// when the read fails or lacks it.
func processStart(ctx context.Context, c *model.Client) float64 {
	resp, err := c.Get(ctx, model.PathOf(api.FileMetrics))
	if err != nil {
		return math.NaN()
	}
	defer resp.Close()
	s, err := metrics.Parser{Families: model.StartFamily()}.Parse(resp.Body, c.Inst.Name+"/metrics")
	if err != nil {
		return math.NaN()
	}
	return metrics.Extract(s).ProcessStartTime
}

// SampleStart is process_start_time_seconds of the first sample's
// /metrics read; NaN when none recorded it.
func SampleStart(ir *model.InstanceResult) float64 {
	if len(ir.Samples) == 0 {
		return math.NaN()
	}
	for _, f := range ir.Samples[0].Fetches {
		if f.Kind == api.FileMetrics && f.ProcessStartTime != 0 {
			return f.ProcessStartTime
		}
	}
	return math.NaN()
}

// otherProcess is the error of a trace whose reads around it (before,
// after) name another process than sample 1's (sample); nil when every
// known start agrees.
func otherProcess(instance string, sample, before, after float64) error {
	for _, v := range []float64{before, after} {
		if !math.IsNaN(sample) && !math.IsNaN(v) && v != sample {
			return &TraceOtherProcessError{Instance: instance, Sample: sample, Before: before, After: after}
		}
	}
	if !math.IsNaN(before) && !math.IsNaN(after) && before != after {
		return &TraceOtherProcessError{Instance: instance, Sample: sample, Before: before, After: after}
	}
	return nil
}
