// Package trace reads a Go 1.22+ execution trace (what net/http/pprof
// serves at /debug/pprof/trace?seconds=N) as a stream and summarises, per
// goroutine, what it did over the window: its latest stack, its state at
// the start and the end, how many times it changed state, the longest gap
// between two changes, and who woke it.
//
// It is a parser in the sense of pkg/stacks: it knows nothing about
// Kubernetes. The caller's Options.Keep predicate decides from a stack
// which goroutines matter; the rest cost one map probe per stack and
// generation. Events are decoded by golang.org/x/exp/trace, the Go team's
// parser of the format, one generation (about one second of the trace) at
// a time, so memory is bounded by a generation and the kept goroutines,
// never by the trace's length.
//
// What a trace cannot show: function arguments, the parent of a goroutine
// created before the window, how long a goroutine had waited before the
// window began, and pprof labels a program does not set.
package trace
