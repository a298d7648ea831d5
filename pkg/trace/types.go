package trace

import (
	"fmt"
	"time"
)

// DefaultMaxBytes bounds a read when Options.MaxBytes is 0: five times the
// 51 MB a 70 s trace of a kube-apiserver with 22,000 goroutines measured
// (issue 18), so a busier server still fits while a stream that never ends
// does not exhaust the reader.
const DefaultMaxBytes = 256 << 20

// DefaultMaxGoroutines bounds the goroutines a Summary keeps when
// Options.MaxGoroutines is 0. A stuck watch keeps three (watcher, handler,
// APF wait), so this covers thousands of watches.
const DefaultMaxGoroutines = 20000

// DefaultMaxFrames bounds the frames kept per stack when Options.MaxFrames
// is 0. The runtime's tracer records at most 128 frames per stack (Go 1.26,
// internal/trace/tracev2/events.go:579 MaxFramesPerStack); the watch path
// is about 30 deep.
const DefaultMaxFrames = 64

// Options tune Read. The zero value keeps every goroutine and reads up to
// DefaultMaxBytes.
type Options struct {
	// Source names the input in errors and in the Summary (a file path or
	// an API server's URL).
	Source string
	// MaxBytes bounds the bytes read from the stream; 0 means
	// DefaultMaxBytes. A stream longer than that is an error naming Source
	// (a *LimitError), never a silent cut; the Summary returned beside it
	// covers the generations read before the bound.
	MaxBytes int64
	// Keep decides from a goroutine's stack (innermost frame first, valid
	// during the call only) whether the Summary keeps that goroutine. It is
	// asked each time a goroutine not kept yet shows a stack the reader has
	// not asked about in this generation; once kept, a goroutine stays
	// kept. nil keeps every goroutine (up to MaxGoroutines).
	Keep func(stack []Frame) bool
	// Progress, when set, is called after each complete generation of the
	// trace (the runtime starts one about every second). Returning false
	// stops the read: the Summary then says StoppedEarly and covers the
	// window read so far. The Progress value is valid during the call only.
	Progress func(Progress) bool
	// MaxGoroutines bounds the kept goroutines (0: DefaultMaxGoroutines).
	// Goroutines past it are counted in Summary.DroppedGoroutines.
	MaxGoroutines int
	// MaxFrames bounds the frames kept per stack (0: DefaultMaxFrames); the
	// innermost frames are kept, and Summary.CutStacks counts the stacks
	// that lost their outer frames. Keep sees the cut stack too.
	MaxFrames int
}

// Frame is one frame of a stack.
type Frame struct {
	// Func is the function's name as the runtime prints it
	// ("k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).processInterval").
	Func string
	File string
	Line int
}

// State is a goroutine's scheduling state, as the tracer records it.
type State string

// The states of a goroutine. A trace names why a goroutine waits (Reason)
// but not for how long it had waited before the window began.
const (
	StateUnknown  State = "unknown"
	StateNotExist State = "notexist"
	StateRunnable State = "runnable"
	StateRunning  State = "running"
	StateWaiting  State = "waiting"
	StateSyscall  State = "syscall"
)

// Summary is what one read proved about the kept goroutines.
type Summary struct {
	// Source is Options.Source.
	Source string
	// Version is the trace format's Go version ("go 1.26").
	Version string
	// Window is the time from the first to the last event read: the span
	// over which "no transition" is proven.
	Window time.Duration
	// Start and End are Window's bounds on the traced process's wall
	// clock, from the trace's clock snapshot (Go 1.25+); zero when the
	// trace carries none.
	Start, End time.Time
	// Generations is the number of complete generations read.
	Generations int
	// Bytes is the number of bytes read from the stream.
	Bytes int64
	// SmallestGeneration is the size in bytes of the smallest generation
	// read, 0 before the first. Every generation repeats the status of
	// each goroutine that did not run in it, with its stack and string
	// tables (runtime/trace.go traceAdvance, Go 1.26), so the smallest one
	// bounds what a generation costs whatever its events: on a server of
	// tens of thousands of idle goroutines most of a short trace.
	SmallestGeneration int64
	// Truncated is set when the stream ended inside a generation, was
	// malformed, or exceeded MaxBytes; StoppedEarly when Progress stopped
	// the read. Why says which, in words. Either way the Summary covers
	// only the generations read completely before that.
	Truncated, StoppedEarly bool
	Why                     string
	// Goroutines are the kept goroutines, by ID.
	Goroutines []Goroutine
	// DroppedGoroutines counts goroutines Keep accepted past
	// MaxGoroutines (up to MaxGoroutines of them: past that it is a lower
	// bound); CutStacks counts kept stacks cut to MaxFrames.
	DroppedGoroutines, CutStacks int
}

// Goroutine is one kept goroutine over the window.
type Goroutine struct {
	ID int64
	// Stack is the latest stack seen for it, innermost frame first: from
	// the generation-start status of a parked goroutine, or from the event
	// that parked it.
	Stack []Frame
	// Reason is why it last blocked ("chan send", "select"), as the
	// tracer names it; empty when it was never seen blocking.
	Reason string
	// FirstSeen is the time from which its state is known, as an offset
	// from the window's start: the start of the generation whose status
	// record showed it (a status proves the state since its generation
	// began), or the change it was first seen making. 0 for a goroutine
	// that existed when the trace began and was kept at its first status.
	FirstSeen time.Duration
	// StartState is its state when first seen; EndState its state at the
	// end of the window (StateNotExist when it exited).
	StartState, EndState State
	// Transitions counts its state changes from FirstSeen to the window's
	// end (the statuses the tracer repeats at each generation are not
	// changes).
	Transitions int
	// LongestGap is the longest time without a state change: between two
	// transitions, or from FirstSeen to the first one, or from the last
	// one to the window's end (or to its exit).
	LongestGap time.Duration
	// Wakeups counts the times it was made runnable from waiting; WokenBy
	// names who did it, most frequent first (at most MaxWakers entries;
	// the rest are counted in OtherWakers). ID 0 stands for no goroutine
	// (the network poller, a timer, the runtime).
	Wakeups     int
	WokenBy     []Waker
	OtherWakers int
}

// MaxWakers bounds Goroutine.WokenBy.
const MaxWakers = 8

// Waker is a goroutine that woke another, and how many times.
type Waker struct {
	ID    int64
	Count int
}

// Observed is how long g was watched: from FirstSeen to the window's end.
func (g Goroutine) Observed(window time.Duration) time.Duration {
	return max(0, window-g.FirstSeen)
}

// Progress is handed to Options.Progress after each generation.
type Progress struct {
	// Window, Generations and Bytes are as in Summary, so far.
	Window      time.Duration
	Generations int
	Bytes       int64
	// Goroutines are the goroutines kept so far, by ID. Their Stack
	// slices are shared with the reader: read them during the call only.
	Goroutines []ProgressGoroutine
}

// ProgressGoroutine is one kept goroutine in a Progress.
type ProgressGoroutine struct {
	ID    int64
	Stack []Frame
	// Transitions is as in Goroutine; 0 means it has not changed state
	// since it was first seen.
	Transitions int
	// FirstSeen is as in Goroutine.
	FirstSeen time.Duration
}

// LimitError is returned when a stream exceeds Options.MaxBytes.
type LimitError struct {
	Source string
	Limit  int64
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("execution trace %q exceeds %d bytes", e.Source, e.Limit)
}

// VersionError is returned for a stream that is not a Go 1.22+ execution
// trace: Header is what its first bytes said (escaped by the caller before
// display).
type VersionError struct {
	Source string
	Header string
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("%q is not a Go 1.22 or later execution trace (header %q)", e.Source, e.Header)
}
