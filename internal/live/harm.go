package live

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// Do no harm: a debug=2 goroutine dump stops the world in the API server
// while it is written (budget.go), so the client itself refuses the
// request unless the run's evidence policy allows it. The sampler decides
// (decideDump) and hands its decision to the request as a permit; the
// client checks the permit against the policy, so no caller, present or
// future, can take a dump the run was told not to take.

// dumpPolicy is a run's rule on debug=2 dumps, fixed when its clients are
// made. The zero value allows a dump only with a permit.
type dumpPolicy struct {
	// force allows every dump (Config.Force).
	force bool
	// refused says why this run takes no dump at all; "" when it may.
	refused string
	// maxPause is the pause budget a permit's estimate must fit; 0 for
	// none.
	maxPause time.Duration
}

// dumpPolicy is the rule of the run c configures: with Force every dump is
// allowed; without the debug=2 dump among its fetches (serve) or with an
// execution trace chosen as evidence none is; otherwise a dump needs a
// permit whose estimated pause fits MaxPause.
func (c Config) dumpPolicy() dumpPolicy {
	p := dumpPolicy{force: c.Force, maxPause: c.MaxPause}
	switch {
	case !c.wants(api.FileGoroutineDebug2):
		p.refused = "this run's fetches do not include the goroutine dump"
	case c.Trace.evidence() == EvidenceTrace:
		p.refused = "the evidence chosen is an execution trace" + paren(evidenceHint(c))
	}
	return p
}

// evidenceHint names the evidence setting, for a refusal.
func evidenceHint(c Config) string {
	if c.Hints.Evidence == "" {
		return ""
	}
	return c.Hints.Evidence + " " + string(EvidenceTrace)
}

type permitKey struct{}

// withDumpPermit is ctx carrying the sampler's decision to take a dump
// whose cost is est.
func withDumpPermit(ctx context.Context, est Estimate) context.Context {
	return context.WithValue(ctx, permitKey{}, est)
}

// check returns why a dump requested under ctx is refused, "" when it is
// allowed.
func (p dumpPolicy) check(ctx context.Context) string {
	if p.force {
		return ""
	}
	if p.refused != "" {
		return p.refused
	}
	est, ok := ctx.Value(permitKey{}).(Estimate)
	switch {
	case !ok:
		return "no decision of this run allowed it"
	case p.maxPause > 0 && !est.Known():
		return fmt.Sprintf("its pause cannot be estimated, and the pause budget is %s", p.maxPause)
	case p.maxPause > 0 && est.Pause > p.maxPause:
		return fmt.Sprintf("its estimated pause of %s is over the pause budget of %s", roundPause(est.Pause), p.maxPause)
	}
	return ""
}

// DumpRefusedError is a debug=2 dump request the client refused, before
// sending it: the run's evidence policy does not allow it.
type DumpRefusedError struct {
	Instance string
	Why      string
}

func (e *DumpRefusedError) Error() string {
	return fmt.Sprintf("%s: GET %s: refused before it was sent: %s, and a goroutine dump stops the world in the API server", e.Instance, pathOf(api.FileGoroutineDebug2), e.Why)
}

// isDump reports whether a request asks for a debug=2 goroutine dump.
func isDump(ref *url.URL) bool {
	return strings.HasSuffix(ref.Path, "/debug/pprof/goroutine") && ref.Query().Get("debug") == "2"
}

// guardDump refuses a dump request the policy does not allow.
func (c *client) guardDump(ctx context.Context, ref *url.URL) error {
	if !isDump(ref) {
		return nil
	}
	if why := c.dumps.check(ctx); why != "" {
		return &DumpRefusedError{Instance: c.inst.Name, Why: why}
	}
	return nil
}

// estimateOf is the estimated cost of a dump after look: from the debug=1
// profile when read, else from go_goroutines.
func estimateOf(look cheapLook) Estimate {
	if look.profile != nil {
		return estimateFromProfile(look.profile)
	}
	return estimateFromGoroutines(look.goroutines)
}

// refusedDump is the dump the policy refuses after look, recorded as a
// withheld one (PauseBudgetError with Refused set), or nil when the
// policy allows a dump.
func refusedDump(cfg Config, instance string, look cheapLook) *PauseBudgetError {
	p := cfg.dumpPolicy()
	if p.force || p.refused == "" {
		return nil
	}
	return &PauseBudgetError{Instance: instance, Estimate: estimateOf(look), Budget: cfg.MaxPause, Refused: p.refused}
}

// withoutTrace says what sample 2 does when the trace chosen failed.
func withoutTrace(cfg Config) string {
	if p := cfg.dumpPolicy(); !p.force && p.refused != "" {
		return "sample 2 takes no goroutine dump either (" + p.refused + "): watches it cannot decide stay undecided"
	}
	return "sample 2 decides as without one"
}

// goroutinesText says go_goroutines, or that it was not read.
func goroutinesText(n float64) string {
	if math.IsNaN(n) {
		return "go_goroutines not read"
	}
	return fmt.Sprintf("go_goroutines %.0f", n)
}
