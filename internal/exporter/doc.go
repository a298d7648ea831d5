// Package exporter is the engine of `kubectl watch-doctor serve`: it runs
// the cheap look of internal/live on an interval against every API server
// instance and exports what it decided as Prometheus metrics, for alerts
// that fire while a watch is stuck rather than after seats run out.
//
// A look reads, per instance, /metrics, the APF dumps and the debug=1
// goroutine profile, then /metrics again to measure the stop-the-world
// pauses the look cost the server (go_sched_pauses_total_other_seconds). It
// never takes a debug=2 dump. An execution trace (which alone tells a stuck
// watcher from a slow one) is taken only when Config.Trace sets a window
// (trace.go): after a look leaves watches undecided on an instance, that
// instance is looked at again with a trace between two samples, and the
// trace's verdicts fill the "stuck" and "progressing" states of
// watchdoctor_watches_by_state, carried while the same watches initialize.
//
// The loop, drawn as states:
//
//	         +------------------- interval (jittered) -----------------+
//	         v                                                         |
//	start -> look --ok--> publish snapshot, ready --> trace due? --no--+
//	          |                                          |yes          |
//	          |                       traced look, publish its states -+
//	          |                                                        |
//	          +--failed--> publish errors -- backoff ------------------+
//
// Exporter is safe for concurrent use: the loop publishes an immutable
// snapshot under a mutex, and scrapes read the latest one, so a scrape
// never sees half a look.
package exporter
