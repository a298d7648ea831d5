// Package bench holds the whole-command benchmark of watch-doctor:
// BenchmarkAnalyze runs `analyze FILE -o json` in-process on generated dumps
// of 10k, 100k and 1M goroutines. run.sh (make bench) also runs the built
// binary and the peer parsers of bench/peers on the same files with
// cmd/wdbench; see README.md.
package bench
