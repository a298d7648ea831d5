package tracefetch

import (
	"fmt"
	"strings"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/live/model"
)

// A trace is believed only when it can be the live trace of the interval
// asked for. net/http/pprof's Trace starts the tracer, sleeps the
// seconds= asked for and stops it (net/http/pprof/pprof.go, Trace), and
// pkg/trace measures a trace's window from its first event to its last;
// so a live trace
//   - covers the window asked for, give or take traceTolerance, unless the
//     run stopped it early (every suspect progressed, the byte budget,
//     Ctrl-C) or the stream was cut short, both of which the report says;
//   - and took at least the span it covers to arrive, on the run's clock,
//     from the request to the end of its body: its events are written as
//     they happen.
// A trace that breaks either is a replayed or hostile answer (issue 35: a
// trace asked for 40 s arrived in 0.18 s covering 20 s, and its verdict
// was believed): it is set aside (TraceImplausibleError) and nothing is
// decided from it. The rate probe is not checked: nothing is decided from
// it, and the byte budget bounds what a false rate costs.

// traceTolerance is how far a live trace's window may fall from the
// window asked for (wanted), and how much sooner than its window it may
// arrive: two generations of the runtime (traceGenerationPeriod, 1 s) or
// a tenth of the window, whichever is more. The window runs from the
// first event to the last, each end within a generation of the tracer's
// start and stop; a loaded server wakes late from the sleep; and the
// server's clock, which dates the events, and the run's, which times the
// request, may run apart by a few parts in a thousand. The real seed
// server's trace asked for 20 s covers 20.0 s
// (testdata/kube-apiserver-v1.37.2/trace-seed).
func traceTolerance(wanted time.Duration) time.Duration {
	return max(2*traceGenerationPeriod, wanted/10)
}

// TraceImplausibleError is a trace set aside because it cannot be the
// live trace of the window asked for.
type TraceImplausibleError struct {
	Instance string
	// Wanted is the window asked for, Covered the trace's window, Took
	// how long it took to arrive, Tolerance traceTolerance(Wanted).
	Wanted, Covered, Took, Tolerance time.Duration
	// Why lists what it breaks.
	Why []string
}

func (e *TraceImplausibleError) Error() string {
	return fmt.Sprintf("%s: the execution trace was set aside, nothing is decided from it: asked for %s, it covers %s and arrived in %s (request to end of body): %s; a live trace covers the window asked for, within %s, and takes at least as long as it covers to arrive: this one was replayed or made up, not traced",
		e.Instance, e.Wanted, roundTenth(e.Covered), e.Took.Round(time.Millisecond), strings.Join(e.Why, ", and "), e.Tolerance)
}

// implausible is the error of tr's trace when it cannot be live, nil when
// it can: took is how long the trace of the interval took to arrive.
// Only a trace that ended on its own (not stopped early, not cut short)
// must cover the window asked for.
func implausible(instance string, tr *model.TraceResult, took time.Duration) error {
	s := tr.Summary
	if s == nil {
		return nil
	}
	tol := traceTolerance(tr.Requested)
	whole := !s.StoppedEarly && !s.Truncated && tr.Err == nil
	var why []string
	if whole && s.Window < tr.Requested-tol {
		why = append(why, fmt.Sprintf("it covers %s less than asked", roundTenth(tr.Requested-s.Window)))
	}
	if s.Window > tr.Requested+tol {
		why = append(why, fmt.Sprintf("it covers %s more than asked", roundTenth(s.Window-tr.Requested)))
	}
	if took < s.Window-tol {
		why = append(why, fmt.Sprintf("it arrived %s sooner than the span it covers", roundTenth(s.Window-took)))
	} else if whole && took < tr.Requested-tol {
		why = append(why, fmt.Sprintf("it arrived %s sooner than the window asked for", roundTenth(tr.Requested-took)))
	}
	if len(why) == 0 {
		return nil
	}
	return &TraceImplausibleError{Instance: instance, Wanted: tr.Requested, Covered: s.Window, Took: took, Tolerance: tol, Why: why}
}

// roundTenth rounds d to a tenth of a second, to the millisecond under
// one.
func roundTenth(d time.Duration) time.Duration {
	if d < time.Second && d > -time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(100 * time.Millisecond)
}

// setAside keeps nothing of tr's trace but why it was set aside (err):
// no summary, the fetch's error, and no file (collect's bundle drops it,
// bundle.Dir.Finish), so neither this run nor analyze decides from it.
func setAside(tr *model.TraceResult, err error) {
	tr.Summary, tr.Err, tr.SetAside = nil, err, true
	if tr.Fetch != nil {
		tr.Fetch.Error, tr.Fetch.File = err.Error(), ""
	}
}
