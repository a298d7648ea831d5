package harm

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/diagnosis"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
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

// estimateFromProfile estimates a debug=2 dump from a debug=1 (or
// protobuf) profile: frames x goroutines at the measured rates.
func estimateFromProfile(a *stacks.Aggregated) model.Estimate {
	frames := 0
	for _, st := range a.Stacks {
		frames += st.Count * len(st.Frames)
	}
	bytes := int64(frames+a.Total) * dumpBytesPerFrame
	return model.Estimate{Bytes: bytes, Pause: pauseOf(bytes), Basis: fmt.Sprintf("the debug=1 profile: %d goroutines, %d frames", a.Total, frames)}
}

// estimateFromGoroutines estimates a debug=2 dump from go_goroutines alone.
func estimateFromGoroutines(n float64) model.Estimate {
	if math.IsNaN(n) || n < 0 {
		return model.Estimate{}
	}
	bytes := int64(n) * dumpBytesPerGoroutine
	return model.Estimate{Bytes: bytes, Pause: pauseOf(bytes), Basis: fmt.Sprintf("go_goroutines %.0f", n)}
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

// CheapLook is what a sample read before deciding on a debug=2 dump.
type CheapLook struct {
	// Goroutines and start are go_goroutines and
	// process_start_time_seconds; NaN when unknown.
	Goroutines, Start float64
	Requests          *apf.Requests
	Profile           *stacks.Aggregated
	// Phases are the profile's watchers per phase, as the classifier
	// counted them when it read the profile (watches.ReadProfile); nil
	// without a profile.
	Phases []api.PhaseCount
	// BuildVersion is kubernetes_build_info's git_version, "" if none.
	BuildVersion string
	// At is the server's clock at the capture, for APF ages.
	At time.Time
	// Horizon is how long after at the run's verdict is made (the last
	// sample's capture): a watch initializing at this look is that much
	// older by then.
	Horizon time.Duration
}

// InitialInSend counts the initial-phase watchers blocked sending in the
// look's profile: the suspects a trace of the interval decides.
func (l CheapLook) InitialInSend() int {
	if l.Profile == nil {
		return 0
	}
	n, _ := watches.InSend(l.Phases)
	return n
}

// DecideDump decides whether to take the debug=2 dump after the cheap
// look: take it (why says on what grounds); or not, because the cheap
// look answers alone (why says how), because its estimated pause is over
// the budget (withheld), or because MaxGoroutines refuses it (err).
func DecideDump(cfg model.Config, instance string, look CheapLook) (take bool, why string, withheld *model.PauseBudgetError, err error) {
	if cfg.Force {
		return true, "forced", nil, nil
	}
	if r := refusedDump(cfg, instance, look); r != nil {
		if answer := CheapAnswer(look); answer != "" {
			return false, answer, nil, nil
		}
		return false, "", r, nil
	}
	if cfg.MaxGoroutines > 0 && (math.IsNaN(look.Goroutines) || look.Goroutines > float64(cfg.MaxGoroutines)) {
		return false, "", nil, &model.GoroutineLimitError{Instance: instance, Goroutines: look.Goroutines, Limit: cfg.MaxGoroutines}
	}
	if answer := CheapAnswer(look); answer != "" {
		return false, answer, nil, nil
	}
	est := model.Estimate{}
	if look.Profile != nil {
		est = estimateFromProfile(look.Profile)
	} else {
		est = estimateFromGoroutines(look.Goroutines)
	}
	if cfg.MaxPause > 0 && (!est.Known() || est.Pause > cfg.MaxPause) {
		return false, "", &model.PauseBudgetError{Instance: instance, Estimate: est, Budget: cfg.MaxPause}, nil
	}
	if !est.Known() {
		return true, "no pause budget", nil, nil
	}
	return true, fmt.Sprintf("estimated pause %s from %s", model.RoundPause(est.Pause), est.Basis), nil, nil
}

// CheapAnswer returns why the cheap look is a complete answer, "" when it
// is not: the profile shows no watcher blocked sending, or the APF dump
// shows no watch that will have been initializing longer than
// diagnosis.StallBound by the run's last sample (look.Horizon later) and
// the profile no streaming watcher blocked sending. A watch 20 s into its
// replay at the first of two samples 70 s apart is 90 s into it at the
// second: if it is still initializing then, only the evidence gathered
// now decides it.
func CheapAnswer(look CheapLook) string {
	if look.Profile == nil {
		return ""
	}
	initial, streaming := watches.InSend(look.Phases)
	switch {
	case initial == 0 && streaming == 0:
		return "the debug=1 profile shows no watcher blocked sending an event"
	case streaming > 0 || look.Requests == nil || !look.Requests.HasDetails || look.At.IsZero():
		return ""
	}
	n := 0
	for _, r := range look.Requests.Requests {
		if !r.Executing() || !strings.EqualFold(r.Verb, "watch") {
			continue
		}
		n++
		if diagnosis.PastStallBound(r.StartTime, look.At.Add(look.Horizon)) {
			return ""
		}
	}
	if look.Horizon > 0 {
		return fmt.Sprintf("%d watch requests initializing (APF dump_requests), none for longer than %s by the last sample", n, diagnosis.StallBound)
	}
	return fmt.Sprintf("%d watch requests initializing (APF dump_requests), none for longer than %s", n, diagnosis.StallBound)
}
