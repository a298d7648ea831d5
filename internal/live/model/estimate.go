package model

import (
	"fmt"
	"math"
	"time"

	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

// Estimate is the predicted cost of a debug=2 dump.
type Estimate struct {
	// Bytes is the size of the whole dump, before the runtime's cut.
	Bytes int64
	// Pause is the longest the server's goroutines would be stopped.
	Pause time.Duration
	// Basis says what the estimate comes from.
	Basis string
}

// Known reports whether there was anything to estimate from.
func (e Estimate) Known() bool { return e.Basis != "" }

// Cut reports whether the runtime would cut the dump at 64 MiB.
func (e Estimate) Cut() bool { return e.Bytes > stacks.MaxDumpBytes }

// PauseBudgetError is a debug=2 dump not taken: its estimated pause is
// over the budget (Config.MaxPause), or cannot be estimated. The CLI
// names the flags that change it.
type PauseBudgetError struct {
	Instance string
	Estimate Estimate
	Budget   time.Duration
	// Refused, when set, says why the run's evidence policy takes no dump
	// at all, whatever its pause (harm.go).
	Refused string
}

func (e *PauseBudgetError) Error() string {
	if e.Refused != "" {
		return fmt.Sprintf("%s: no goroutine dump: %s", e.Instance, e.Refused)
	}
	if !e.Estimate.Known() {
		return fmt.Sprintf("%s: no goroutine dump: its pause cannot be estimated (neither the debug=1 profile nor go_goroutines could be read), and the pause budget is %s", e.Instance, e.Budget)
	}
	return fmt.Sprintf("%s: no goroutine dump: %s (estimated from %s), over the pause budget of %s", e.Instance, e.Cost(), e.Estimate.Basis, e.Budget)
}

// Cost says what the dump would cost the server.
func (e *PauseBudgetError) Cost() string {
	if !e.Estimate.Known() {
		return "the pause of a dump cannot be estimated"
	}
	s := fmt.Sprintf("a dump would stop this server for about %s", RoundPause(e.Estimate.Pause))
	if e.Estimate.Cut() {
		s += fmt.Sprintf(" and be cut at %d MiB (about %d MiB whole)", stacks.MaxDumpBytes>>20, e.Estimate.Bytes>>20)
	}
	return s
}

func RoundPause(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}

// GoroutineLimitError is a debug=2 dump refused by Config.MaxGoroutines.
type GoroutineLimitError struct {
	Instance string
	// Goroutines is go_goroutines, NaN when /metrics could not be read.
	Goroutines float64
	Limit      int
}

func (e *GoroutineLimitError) Error() string {
	if math.IsNaN(e.Goroutines) {
		return fmt.Sprintf("%s: no goroutine dump: go_goroutines could not be read from /metrics, so it cannot be checked against the goroutine limit %d", e.Instance, e.Limit)
	}
	return fmt.Sprintf("%s: no goroutine dump: go_goroutines is %.0f, above the goroutine limit %d", e.Instance, e.Goroutines, e.Limit)
}
