package model

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/english"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// DumpPolicy is a run's rule on debug=2 dumps, fixed when its clients are
// made. The zero value allows a dump only with a permit.
type DumpPolicy struct {
	// Force allows every dump (Config.Force).
	Force bool
	// Refused says why this run takes no dump at all; "" when it may.
	Refused string
	// maxPause is the pause budget a permit's estimate must fit; 0 for
	// none.
	maxPause time.Duration
}

// DumpPolicy is the rule of the run c configures: with Force every dump is
// allowed; without the debug=2 dump among its fetches (serve) or with an
// execution trace chosen as evidence none is; otherwise a dump needs a
// permit whose estimated pause fits MaxPause.
func (c Config) DumpPolicy() DumpPolicy {
	p := DumpPolicy{Force: c.Force, maxPause: c.MaxPause}
	switch {
	case !c.Wants(api.FileGoroutineDebug2):
		p.Refused = "this run's fetches do not include the goroutine dump"
	case c.Trace.EvidenceOrDefault() == EvidenceTrace:
		p.Refused = "the evidence chosen is an execution trace" + english.Paren(evidenceHint(c))
	}
	return p
}

// evidenceHint names the evidence setting, for a refusal.
func evidenceHint(c Config) string {
	if c.Words.Evidence == "" {
		return ""
	}
	return c.Words.Evidence + " " + string(EvidenceTrace)
}

type permitKey struct{}

// WithDumpPermit is ctx carrying the sampler's decision to take a dump
// whose cost is est.
func WithDumpPermit(ctx context.Context, est Estimate) context.Context {
	return context.WithValue(ctx, permitKey{}, est)
}

// check returns why a dump requested under ctx is refused, "" when it is
// allowed.
func (p DumpPolicy) check(ctx context.Context) string {
	if p.Force {
		return ""
	}
	if p.Refused != "" {
		return p.Refused
	}
	est, ok := ctx.Value(permitKey{}).(Estimate)
	switch {
	case !ok:
		return "no decision of this run allowed it"
	case p.maxPause > 0 && !est.Known():
		return fmt.Sprintf("its pause cannot be estimated, and the pause budget is %s", p.maxPause)
	case p.maxPause > 0 && est.Pause > p.maxPause:
		return fmt.Sprintf("its estimated pause of %s is over the pause budget of %s", RoundPause(est.Pause), p.maxPause)
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
	return fmt.Sprintf("%s: GET %s: refused before it was sent: %s, and a goroutine dump stops the world in the API server", e.Instance, PathOf(api.FileGoroutineDebug2), e.Why)
}

// isDump reports whether a request asks for a debug=2 goroutine dump.
func isDump(ref *url.URL) bool {
	return strings.HasSuffix(ref.Path, "/debug/pprof/goroutine") && ref.Query().Get("debug") == "2"
}

// guardDump refuses a dump request the policy does not allow.
func (c *Client) guardDump(ctx context.Context, ref *url.URL) error {
	if !isDump(ref) {
		return nil
	}
	if why := c.dumps.check(ctx); why != "" {
		return &DumpRefusedError{Instance: c.Inst.Name, Why: why}
	}
	return nil
}
