// Package tracefetch fetches an execution trace between two samples: a
// short probe measures its rate, the window is cut to the byte budget
// (tracefetch.go), a server ignoring seconds= is cut at a deadline
// (tracecut.go), and a trace from another process than the samples' is
// refused (traceprocess.go). It imports only internal/live/model of
// internal/live.
package tracefetch
