package watches

import (
	"io"
	"time"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/stacks"
	"github.com/watch-doctor/watch-doctor/pkg/trace"
)

// TraceClass is what a goroutine of an execution trace is on the watch
// path.
type TraceClass string

// The classes of trace goroutines kept.
const (
	// TraceWatcher: a cacheWatcher goroutine (processInterval up to
	// v1.37, process from v1.38).
	TraceWatcher TraceClass = "watcher"
	// TraceHandler: a watch handler (WatchServer.HandleHTTP) blocked
	// writing to its client when first kept.
	TraceHandler TraceClass = "handler"
	// TraceAPFWait: an APF goroutine in (*initializationSignal).Wait.
	TraceAPFWait TraceClass = "apf-wait"
	// TraceCacheWait: a watch request waiting for its watch cache
	// ((*ready).wait, waitUntilFreshLocked under (*Cacher).Watch).
	TraceCacheWait TraceClass = "cache-wait"
)

// TraceGoroutine is one kept goroutine of a trace, classified by its
// latest stack.
type TraceGoroutine struct {
	trace.Goroutine
	Class TraceClass
	// Phase and InSend are the watcher's, by its latest stack; a watcher
	// first kept in the initial phase and seen last streaming finished its
	// replay in the window.
	Phase  api.Phase
	InSend bool
	// SeenInitial is set for a watcher kept while replaying initial events.
	SeenInitial bool
}

// Trace is what the diagnosis keeps of one execution trace: the window
// and the watch-path goroutines.
type Trace struct {
	Source  string
	Version string
	Window  time.Duration
	// Start and End bound the window on the server's clock (zero without
	// a clock snapshot in the trace).
	Start, End time.Time
	Bytes      int64
	// Generations and SmallestGeneration: see trace.Summary (what a
	// longer trace of the same server will cost).
	Generations        int
	SmallestGeneration int64
	// Truncated and StoppedEarly: see trace.Summary; Why says which.
	Truncated, StoppedEarly bool
	Why                     string
	Goroutines              []TraceGoroutine
	// Dropped counts watch-path goroutines past the parser's bound.
	Dropped int
}

// TraceOptions tune ReadTrace.
type TraceOptions struct {
	// Source names the trace in errors and notes.
	Source string
	// MaxBytes bounds the read (0: trace.DefaultMaxBytes).
	MaxBytes int64
	// Progress, when set, sees the watch path after each generation;
	// returning false stops the read (the trace then covers the window so
	// far).
	Progress func(TraceProgress) bool
}

// TraceProgress is the watch path after one generation of a trace.
type TraceProgress struct {
	Window time.Duration
	Bytes  int64
	// Initial counts the initial-phase watchers seen so far; Progressed
	// those of them that changed state since first seen. Every suspect has
	// shown progress when they are equal.
	Initial, Progressed int
}

// ReadTrace streams an execution trace through the classifier: it keeps
// the goroutines on the watch path (keepTraceStack) and classifies each by
// its latest stack. A truncated trace returns what was read with the
// parser's error (a *trace.TruncatedError or *trace.LimitError), which the
// caller may report as a note; a stream that is not a trace returns nil.
func ReadTrace(r io.Reader, opts TraceOptions) (*Trace, error) {
	var cl traceClassifier
	popts := trace.Options{Source: opts.Source, MaxBytes: opts.MaxBytes, Keep: cl.keep}
	if opts.Progress != nil {
		popts.Progress = func(p trace.Progress) bool {
			tp := TraceProgress{Window: p.Window, Bytes: p.Bytes}
			for _, g := range p.Goroutines {
				if c := cl.classify(g.Stack); c.Class == TraceWatcher && c.Phase == api.PhaseInitial {
					tp.Initial++
					if g.Transitions > 0 {
						tp.Progressed++
					}
				}
			}
			return opts.Progress(tp)
		}
	}
	sum, err := trace.Read(r, popts)
	if sum == nil {
		return nil, err
	}
	t := &Trace{
		Source: sum.Source, Version: sum.Version, Window: sum.Window, Start: sum.Start, End: sum.End, Bytes: sum.Bytes,
		Generations: sum.Generations, SmallestGeneration: sum.SmallestGeneration,
		Truncated: sum.Truncated, StoppedEarly: sum.StoppedEarly, Why: sum.Why, Dropped: sum.DroppedGoroutines,
	}
	for _, g := range sum.Goroutines {
		c := cl.classify(g.Stack)
		if c.Class == "" {
			continue
		}
		c.Goroutine = g
		// Kept only on the watch path: a watcher is kept in its replay
		// (keepTraceStack), so one seen streaming finished it in the window.
		c.SeenInitial = c.Class == TraceWatcher
		t.Goroutines = append(t.Goroutines, c)
	}
	return t, err
}

// traceClassifier classifies trace stacks with one frame buffer reused
// from call to call: the parser asks Keep about every distinct stack of
// every generation (about a second each), most of them not on the watch
// path. Not safe for concurrent use.
type traceClassifier struct {
	frames []stacks.Frame
	roles  []role
	names  names
}

// classify is classifyTraceStack through the reused buffers and the
// classifier's names memo.
func (cl *traceClassifier) classify(stack []trace.Frame) TraceGoroutine {
	cl.frames = toStackFrames(cl.frames[:0], stack)
	st := cl.names.stackOf(cl.frames, cl.roles)
	cl.roles = st.roles
	return classifyTraceFrames(st)
}

// keep is the parser's Keep: keepTraceStack through the reused buffer.
func (cl *traceClassifier) keep(stack []trace.Frame) bool {
	return keepClass(cl.classify(stack))
}

// keepTraceStack is the parser's Keep: initial-phase watchers, watch
// handlers blocked writing to their client, APF waits for
// WatchInitialized, and watch requests waiting for their watch cache.
// Streaming watchers and idle handlers are not kept: a server of 10,000
// idle watches would otherwise keep 20,000 goroutines.
func keepTraceStack(stack []trace.Frame) bool {
	return keepClass(classifyTraceStack(stack))
}

// keepClass says whether a classified stack is one keepTraceStack keeps.
func keepClass(c TraceGoroutine) bool {
	switch c.Class {
	case TraceWatcher:
		return c.Phase == api.PhaseInitial
	case "":
		return false
	}
	return true
}

// classifyTraceStack classifies one trace stack with the dump's frame
// rules (classifyFrames); the cache waits are the trace's own.
func classifyTraceStack(stack []trace.Frame) TraceGoroutine {
	var cl traceClassifier
	return cl.classify(stack)
}

// toStackFrames appends stack to dst as the dump's frames.
func toStackFrames(dst []stacks.Frame, stack []trace.Frame) []stacks.Frame {
	for _, f := range stack {
		dst = append(dst, stacks.Frame{Func: f.Func, File: f.File, Line: f.Line})
	}
	return dst
}

// classifyTraceFrames classifies a trace stack converted to the dump's frames.
func classifyTraceFrames(st stack) TraceGoroutine {
	var c TraceGoroutine
	switch fc := classifyFrames(st); fc.kind {
	case frameWatcher:
		c.Class, c.Phase, c.InSend = TraceWatcher, fc.watcher.Phase, fc.watcher.InSend
	case frameHandler:
		if fc.block == api.HandlerClientNotReading {
			c.Class = TraceHandler
		}
	case frameAPFWait:
		c.Class = TraceAPFWait
	}
	if c.Class == "" && waitsForCache(st) {
		c.Class = TraceCacheWait
	}
	return c
}

// ReplayLoop names the watcher loop's function a trace stack replays its
// initial events in: "processInitialEvents" (v1.38 and later), or
// "processInterval" (up to v1.37, and for any other stack).
func ReplayLoop(stack []trace.Frame) string {
	for _, f := range stack {
		if roleOf(f.Func) == roleInitialEvents {
			return "processInitialEvents"
		}
	}
	return "processInterval"
}
