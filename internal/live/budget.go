package live

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/diagnosis"
	"github.com/watch-doctor/watch-doctor/internal/watches"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

// A debug=2 goroutine dump stops the world in the API server: runtime/pprof
// writeGoroutineStacks (pprof.go:813-827 in Go 1.26) calls
// runtime.Stack(buf, true), which formats every goroutine's stack with the
// world stopped, from a 1 MiB buffer doubled up to 64 MiB; each try walks
// every goroutine, and past 64 MiB the dump is cut. The cheap look (APF
// dumps, /metrics, the debug=1 profile) costs the server a few
// milliseconds: it decides first.

// Rates of a debug=2 dump of kube-apiserver, from which its size and pause
// are estimated before it is taken (docs/diagnose.md "Production scale").
const (
	// dumpBytesPerFrame: bytes of a debug=2 dump per frame of the debug=1
	// profile, counting a goroutine's header and "created by" as one
	// frame. The real v1.37.2 captures of testdata hold 161 (t1: 2,103,943
	// bytes for 2,227 goroutines and 10,814 frames); make bench-live
	// measured 156 to 165 with 0 to 2,000 idle watches.
	dumpBytesPerFrame = 165
	// dumpBytesPerGoroutine is used when only go_goroutines is known: the
	// same captures average 950 bytes per goroutine.
	dumpBytesPerGoroutine = 1000
	// dumpPausePerBytePerTry is the longest stop of the world per byte of
	// the whole dump and per try of runtime.Stack: every try walks every
	// goroutine, the 64 MiB cut only drops what does not fit. Fitted on
	// make bench-live (docs/diagnose.md "Production scale"): 4.4 to 21.6 ns over
	// eight measurements from 2,261 to 42,300 goroutines on a shared
	// 2-core machine; 14 ns is their middle.
	dumpPausePerBytePerTry = 14 * time.Nanosecond
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

// estimateFromProfile estimates a debug=2 dump from a debug=1 (or
// protobuf) profile: frames x goroutines at the measured rates.
func estimateFromProfile(a *stacks.Aggregated) Estimate {
	frames := 0
	for _, st := range a.Stacks {
		frames += st.Count * len(st.Frames)
	}
	bytes := int64(frames+a.Total) * dumpBytesPerFrame
	return Estimate{Bytes: bytes, Pause: pauseOf(bytes), Basis: fmt.Sprintf("the debug=1 profile: %d goroutines, %d frames", a.Total, frames)}
}

// estimateFromGoroutines estimates a debug=2 dump from go_goroutines alone.
func estimateFromGoroutines(n float64) Estimate {
	if math.IsNaN(n) || n < 0 {
		return Estimate{}
	}
	bytes := int64(n) * dumpBytesPerGoroutine
	return Estimate{Bytes: bytes, Pause: pauseOf(bytes), Basis: fmt.Sprintf("go_goroutines %.0f", n)}
}

// pauseOf is the longest stop of the world of a dump of bytes: one walk
// of every goroutine per try of runtime.Stack, whose buffer starts at
// 1 MiB and doubles until the dump fits or reaches 64 MiB.
func pauseOf(bytes int64) time.Duration {
	tries := int64(1)
	for buf := int64(1 << 20); buf < bytes && buf < stacks.MaxDumpBytes; buf *= 2 {
		tries++
	}
	return time.Duration(bytes*tries) * dumpPausePerBytePerTry
}

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
	s := fmt.Sprintf("a dump would stop this server for about %s", roundPause(e.Estimate.Pause))
	if e.Estimate.Cut() {
		s += fmt.Sprintf(" and be cut at %d MiB (about %d MiB whole)", stacks.MaxDumpBytes>>20, e.Estimate.Bytes>>20)
	}
	return s
}

func roundPause(d time.Duration) time.Duration {
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

// cheapLook is what a sample read before deciding on a debug=2 dump.
type cheapLook struct {
	// goroutines and start are go_goroutines and
	// process_start_time_seconds; NaN when unknown.
	goroutines, start float64
	requests          *apf.Requests
	profile           *stacks.Aggregated
	// buildVersion is kubernetes_build_info's git_version, "" if none.
	buildVersion string
	// at is the server's clock at the capture, for APF ages.
	at time.Time
	// horizon is how long after at the run's verdict is made (the last
	// sample's capture): a watch initializing at this look is that much
	// older by then.
	horizon time.Duration
}

// decideDump decides whether to take the debug=2 dump after the cheap
// look: take it (why says on what grounds); or not, because the cheap
// look answers alone (why says how), because its estimated pause is over
// the budget (withheld), or because MaxGoroutines refuses it (err).
func decideDump(cfg Config, instance string, look cheapLook) (take bool, why string, withheld *PauseBudgetError, err error) {
	if cfg.Force {
		return true, "forced", nil, nil
	}
	if r := refusedDump(cfg, instance, look); r != nil {
		if answer := cheapAnswer(look); answer != "" {
			return false, answer, nil, nil
		}
		return false, "", r, nil
	}
	if cfg.MaxGoroutines > 0 && (math.IsNaN(look.goroutines) || look.goroutines > float64(cfg.MaxGoroutines)) {
		return false, "", nil, &GoroutineLimitError{Instance: instance, Goroutines: look.goroutines, Limit: cfg.MaxGoroutines}
	}
	if answer := cheapAnswer(look); answer != "" {
		return false, answer, nil, nil
	}
	est := Estimate{}
	if look.profile != nil {
		est = estimateFromProfile(look.profile)
	} else {
		est = estimateFromGoroutines(look.goroutines)
	}
	if cfg.MaxPause > 0 && (!est.Known() || est.Pause > cfg.MaxPause) {
		return false, "", &PauseBudgetError{Instance: instance, Estimate: est, Budget: cfg.MaxPause}, nil
	}
	if !est.Known() {
		return true, "no pause budget", nil, nil
	}
	return true, fmt.Sprintf("estimated pause %s from %s", roundPause(est.Pause), est.Basis), nil, nil
}

// cheapAnswer returns why the cheap look is a complete answer, "" when it
// is not: the profile shows no watcher blocked sending, or the APF dump
// shows no watch that will have been initializing longer than
// diagnosis.StallBound by the run's last sample (look.horizon later) and
// the profile no streaming watcher blocked sending. A watch 20 s into its
// replay at the first of two samples 70 s apart is 90 s into it at the
// second: if it is still initializing then, only the evidence gathered
// now decides it.
func cheapAnswer(look cheapLook) string {
	if look.profile == nil {
		return ""
	}
	initial, streaming := 0, 0
	for _, pc := range watches.FromAggregated(look.profile, watches.FormatDebug1).PhaseCounts {
		switch {
		case !pc.InSend:
		case pc.Phase == api.PhaseInitial:
			initial += pc.Count
		default:
			streaming += pc.Count
		}
	}
	switch {
	case initial == 0 && streaming == 0:
		return "the debug=1 profile shows no watcher blocked sending an event"
	case streaming > 0 || look.requests == nil || !look.requests.HasDetails || look.at.IsZero():
		return ""
	}
	n := 0
	for _, r := range look.requests.Requests {
		if !r.Executing() || !strings.EqualFold(r.Verb, "watch") {
			continue
		}
		n++
		if diagnosis.PastStallBound(r.StartTime, look.at.Add(look.horizon)) {
			return ""
		}
	}
	if look.horizon > 0 {
		return fmt.Sprintf("%d watch requests initializing (APF dump_requests), none for longer than %s by the last sample", n, diagnosis.StallBound)
	}
	return fmt.Sprintf("%d watch requests initializing (APF dump_requests), none for longer than %s", n, diagnosis.StallBound)
}
