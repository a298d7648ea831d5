package metrics

import (
	"fmt"
	"math"
	"sort"
)

// SchedPausesOther is the Go runtime's histogram of non-GC stop-the-world
// pauses (runtime/metrics /sched/pauses/total/other:seconds), exported by
// every Go 1.22+ binary through client_golang's Go collector. A goroutine
// dump (debug=2) and the start of an execution trace are such pauses.
const SchedPausesOther = "go_sched_pauses_total_other_seconds"

// SchedPausesStoppingOther is the part of those pauses spent stopping the
// world (runtime/metrics /sched/pauses/stopping/other:seconds, Go 1.22+):
// from deciding to stop until every running thread reached a safe point,
// before the work the pause is for. Under CPU starvation a thread the
// operating system has descheduled cannot answer, so this is most of a
// long pause (docs/diagnose-at-scale.md, "Which pauses, and from what").
const SchedPausesStoppingOther = "go_sched_pauses_stopping_other_seconds"

// Pauses is one reading of a pause histogram.
type Pauses struct {
	Count uint64
	Sum   float64
	// Stopping is SchedPausesStoppingOther's sum, when StoppingKnown (the
	// histogram is there, with a usable sum).
	Stopping      float64
	StoppingKnown bool
	// Buckets are cumulative counts by upper bound, ascending; the last
	// bound may be +Inf.
	Buckets []Bucket
}

// Bucket is one cumulative histogram bucket.
type Bucket struct {
	UpperBound float64
	Count      uint64
}

// PauseDelta is how a pause histogram grew between two readings.
type PauseDelta struct {
	Count uint64
	Sum   float64
	// LargestAtMost is the upper bound of the highest bucket whose count
	// grew: every new pause was at most this long. 0 when none grew.
	LargestAtMost float64
	// Stopping is how much of Sum was spent stopping the world, when
	// StoppingKnown: both readings had it, it did not go down, and it is
	// no more than Sum.
	Stopping      float64
	StoppingKnown bool
}

// SchedPauses reads SchedPausesOther from s. ok is false when s has no such
// histogram (a Go binary older than 1.22, or a build without the runtime
// metrics collector).
func SchedPauses(s *Sample) (p Pauses, ok bool, err error) {
	fam := s.Family(SchedPausesOther)
	if fam == nil {
		return Pauses{}, false, nil
	}
	if len(fam.GetMetric()) != 1 || fam.GetMetric()[0].GetHistogram() == nil {
		return Pauses{}, false, fmt.Errorf("%s: %s: want one histogram series, have %d series of type %s", s.Source, SchedPausesOther, len(fam.GetMetric()), fam.GetType())
	}
	h := fam.GetMetric()[0].GetHistogram()
	p = Pauses{Count: h.GetSampleCount(), Sum: h.GetSampleSum()}
	if why := unusable(p.Sum); why != "" {
		return Pauses{}, false, fmt.Errorf("%s: %s_sum: %s", s.Source, SchedPausesOther, why)
	}
	for _, b := range h.GetBucket() {
		if math.IsNaN(b.GetUpperBound()) {
			return Pauses{}, false, fmt.Errorf("%s: %s_bucket: bound NaN: not measured", s.Source, SchedPausesOther)
		}
		p.Buckets = append(p.Buckets, Bucket{UpperBound: b.GetUpperBound(), Count: b.GetCumulativeCount()})
	}
	sort.Slice(p.Buckets, func(i, j int) bool { return p.Buckets[i].UpperBound < p.Buckets[j].UpperBound })
	if st := s.Family(SchedPausesStoppingOther); st != nil && len(st.GetMetric()) == 1 && st.GetMetric()[0].GetHistogram() != nil {
		if v := st.GetMetric()[0].GetHistogram().GetSampleSum(); unusable(v) == "" {
			p.Stopping, p.StoppingKnown = v, true
		}
	}
	return p, true, nil
}

// Since is how p grew after earlier, a reading of the same process. It
// fails when a count went down: the readings are of different processes
// (a restart) or out of order.
func (p Pauses) Since(earlier Pauses) (PauseDelta, error) {
	if p.Count < earlier.Count {
		return PauseDelta{}, fmt.Errorf("%s count went down from %d to %d: the readings are not of one process", SchedPausesOther, earlier.Count, p.Count)
	}
	if p.Sum < earlier.Sum {
		return PauseDelta{}, fmt.Errorf("%s sum went down from %g to %g: the readings are not of one process", SchedPausesOther, earlier.Sum, p.Sum)
	}
	d := PauseDelta{Count: p.Count - earlier.Count, Sum: p.Sum - earlier.Sum}
	before := make(map[float64]uint64, len(earlier.Buckets))
	for _, b := range earlier.Buckets {
		before[b.UpperBound] = b.Count
	}
	// Cumulative counts: bucket i holds the pauses in (bound[i-1], bound[i]].
	var prevNow, prevThen uint64
	for _, b := range p.Buckets {
		then := before[b.UpperBound]
		if b.Count < then {
			return PauseDelta{}, fmt.Errorf("%s bucket le=%g went down from %d to %d: the readings are not of one process", SchedPausesOther, b.UpperBound, then, b.Count)
		}
		if (b.Count - prevNow) > (then - prevThen) {
			d.LargestAtMost = b.UpperBound
		}
		prevNow, prevThen = b.Count, then
	}
	if p.StoppingKnown && earlier.StoppingKnown && p.Stopping >= earlier.Stopping {
		// The two sums are rounded apart: allow a microsecond over.
		if st := p.Stopping - earlier.Stopping; st <= d.Sum+1e-6 {
			d.Stopping, d.StoppingKnown = min(st, d.Sum), true
		}
	}
	return d, nil
}
