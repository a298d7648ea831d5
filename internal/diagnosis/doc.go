// Package diagnosis holds the rules: from what internal/watches classified
// (watchers, handlers, APF waits, an execution trace), the APF rows and
// /metrics of each API server, to an api.Report. It reads no file and no
// clock: Diagnose takes the servers' samples and Options.
//
// Diagnose runs each server through named steps (diagnose.go, steps.go,
// dumpcase.go), each returning what it adds, merged into the report in
// one place (added.merge):
//   - traceChoice, diagnoseTrace (tracediagnose.go, tracejudge.go): a
//     server decided from its execution trace, tied to APF rows by
//     elimination;
//   - describeDump, decideAggregated (undecided.go): what a debug=1 or
//     protobuf profile decides;
//   - for a debug=2 dump, dumpCase: judgeAll (judge.go: stuck or slow, one
//     sample or two; held.go; cachewait.go), refineWithTrace
//     (tracerefine.go), apfWarnings, attribute (client matching: the
//     contract in match.go, the algorithm in matcher.go, classes.go,
//     components.go, ambiguity.go; attribute.go writes it into the
//     findings; crosscheck.go checks it against /metrics),
//     partialSuspects, annotate.
//
// Then the summary, sorted findings and the advice (advice.go), phrased
// with the caller's Words.
package diagnosis
