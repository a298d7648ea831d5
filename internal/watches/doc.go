// Package watches is the classifier: the one route from the evidence of a
// kube-apiserver (goroutine dumps, execution traces) to its watchers,
// their handlers and their APF waits. It reads no file and no clock:
// callers hand it a reader and get plain values back; what the watchers
// mean is decided one layer up, by internal/diagnosis.
//
// The routes, each one streaming pass:
//   - ReadDump (read.go): a debug=2 dump through a Collector
//     (classify.go: which goroutine is a cacheWatcher, a watch handler, an
//     APF wait; held.go, notready.go: handlers left after their watcher
//     closed, watches waiting for their cache) into a Dump (dump.go):
//     watchers linked to their handler, APF and connection goroutines. It
//     refuses concatenated dumps and says whether the dump is a
//     kube-apiserver's (Dump.APIServer).
//   - ReadProfile (read.go): a debug=1 or protobuf profile into its counts
//     and a Dump of watchers per phase (FromAggregated).
//   - ReadTrace (trace.go): an execution trace into the goroutines on the
//     watch path and what they did (the same frame rules, on trace
//     stacks).
//
// Frames are read through CanonicalFunc (frames.go), once per distinct
// function name (names.go), so vendored and forked builds classify as
// upstream's; evidence.go reads the handler's
// frame arguments (object type, event size, connection). The evidence
// model the loaders fill and the diagnosis reads is here too: Sample,
// Server, MetricsContext and LevelSeats (dump.go), Trace (trace.go).
package watches
