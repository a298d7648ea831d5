package harm

import (
	"fmt"
	"math"

	"github.com/watch-doctor/watch-doctor/internal/live/model"
)

// Do no harm: a debug=2 goroutine dump stops the world in the API server
// while it is written (budget.go), so the client itself refuses the
// request unless the run's evidence policy allows it. The sampler decides
// (DecideDump) and hands its decision to the request as a permit; the
// client checks the permit against the policy, so no caller, present or
// future, can take a dump the run was told not to take.

// EstimateOf is the estimated cost of a dump after look: from the debug=1
// profile when read, else from go_goroutines.
func EstimateOf(look CheapLook) model.Estimate {
	if look.Profile != nil {
		return estimateFromProfile(look.Profile)
	}
	return estimateFromGoroutines(look.Goroutines)
}

// refusedDump is the dump the policy refuses after look, recorded as a
// withheld one (PauseBudgetError with Refused set), or nil when the
// policy allows a dump.
func refusedDump(cfg model.Config, instance string, look CheapLook) *model.PauseBudgetError {
	p := cfg.DumpPolicy()
	if p.Force || p.Refused == "" {
		return nil
	}
	return &model.PauseBudgetError{Instance: instance, Estimate: EstimateOf(look), Budget: cfg.MaxPause, Refused: p.Refused}
}

// WithoutTrace says what sample 2 does when the trace chosen failed.
func WithoutTrace(cfg model.Config) string {
	if p := cfg.DumpPolicy(); !p.Force && p.Refused != "" {
		return "sample 2 takes no goroutine dump either (" + p.Refused + "): watches it cannot decide stay undecided"
	}
	return "sample 2 decides as without one"
}

// GoroutinesText says go_goroutines, or that it was not read.
func GoroutinesText(n float64) string {
	if math.IsNaN(n) {
		return "go_goroutines not read"
	}
	return fmt.Sprintf("go_goroutines %.0f", n)
}
