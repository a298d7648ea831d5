#!/usr/bin/env bash
# make bench: the Go benchmarks of every stage, the whole command in-process,
# then the built plugin against gostackparse and panicparse on the same
# generated dumps of 10k, 100k and 1M goroutines (bench/README.md).
#
#   bench/run.sh          run everything
#   bench/run.sh clean    remove bench/out (binaries, generated dumps, logs)
#
# Environment: SIZES (default 10k,100k,1M), RUNS (default 3), FLOOR_N
# (default 300k), MATCH_N (default 50000), APFONLY_N (default 50000),
# AUDIT_EVENTS (default 1000000,
# the audit log of BenchmarkAuditScan, about 1 GB, kept in bench/out/dumps),
# BENCHTIME (go test -benchtime of the stage benchmarks, default 1s),
# PANICPARSE_TIMEOUT (default 60s), KEEP_DUMPS=0 to delete the generated
# dumps (about 1 GB) at the end instead of keeping them for the next run.
# Everything is fetched through the Go module proxy; nothing is installed.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out="$root/bench/out"

if [[ "${1:-}" == "clean" ]]; then
  rm -rf "$out"
  exit 0
fi

SIZES=${SIZES:-10k,100k,1M}
RUNS=${RUNS:-3}
BENCHTIME=${BENCHTIME:-1s}
PANICPARSE_TIMEOUT=${PANICPARSE_TIMEOUT:-60s}
KEEP_DUMPS=${KEEP_DUMPS:-1}
AUDIT_EVENTS=${AUDIT_EVENTS:-1000000}
export GOFLAGS="${GOFLAGS:--buildvcs=false}"

mkdir -p "$out/bin" "$out/dumps"
log="$out/bench-$(date -u +%Y%m%dT%H%M%SZ).txt"
exec > >(tee "$log") 2>&1

step() { echo; echo "=== $*"; }

step "build: the plugin as released, the driver, the peers harness (its own module)"
go version
go build -trimpath -o "$out/bin/kubectl-watch_doctor" ./cmd/kubectl-watch_doctor
go build -trimpath -o "$out/bin/wdbench" ./bench/cmd/wdbench
(cd bench/peers && go build -trimpath -o "$out/bin/peers" .)

step "stage benchmarks: pkg/stacks (parse), pkg/trace (execution traces), internal/watches (classify, link, ReadTrace), internal/diagnosis (diagnose), internal/bundle (streaming read), internal/report (render)"
go test -run '^$' -bench . -benchmem -benchtime "$BENCHTIME" \
  ./pkg/stacks ./pkg/trace ./internal/watches ./internal/diagnosis ./internal/bundle ./internal/report

step "replay: one virtual hour of issue-137631 at 1000 clients and 20000 objects (internal/cacher, unpatched and pr141899)"
go test -run '^$' -bench '^BenchmarkIssue137631Hour$' -benchtime 1x -benchmem ./internal/replay

step "whole command in-process: analyze FILE -o json on generated dumps ($SIZES); the audit log parse ($AUDIT_EVENTS events)"
WATCH_DOCTOR_BENCH_SIZES="$SIZES" WATCH_DOCTOR_BENCH_AUDIT_EVENTS="$AUDIT_EVENTS" go test -run '^$' -bench . -benchmem ./bench

step "whole command as a process, against gostackparse and panicparse on the same files"
"$out/bin/wdbench" -wd "$out/bin/kubectl-watch_doctor" -peers "$out/bin/peers" \
  -dir "$out/dumps" -sizes "$SIZES" -runs "$RUNS" -panicparse-timeout "$PANICPARSE_TIMEOUT"

step "the floor: analyze --max-dump-size 1Gi -o json of a ${FLOOR_N:-300k}-goroutine dump against gostackparse's parse and wc -l, alternating (targets >= 4x gostackparse, <= 8x wc -l, < 128 MiB peak RSS)"
"$out/bin/wdbench" floor -wd "$out/bin/kubectl-watch_doctor" -peers "$out/bin/peers" -dir "$out/dumps" -n "${FLOOR_N:-300k}" -runs "$RUNS"

for shape in spread one-connection same-instant; do
  step "matching ($shape storm): analyze -o json on 50,000 initial-phase watchers with 50,000 executing watch requests (targets < 2 s, < 256 MiB peak RSS), then the storm's table (targets <= 36 lines, < 3 s)"
  "$out/bin/wdbench" match -wd "$out/bin/kubectl-watch_doctor" -dir "$out/dumps" -n "${MATCH_N:-50000}" -runs "$RUNS" -shape "$shape"
done

step "APF-only: analyze -o json on two captures without a goroutine dump, ${APFONLY_N:-50000} executing watch rows in each APF dump_requests (targets < 3 s, < 256 MiB peak RSS)"
"$out/bin/wdbench" apfonly -wd "$out/bin/kubectl-watch_doctor" -dir "$out/dumps" -n "${APFONLY_N:-50000}" -runs "$RUNS"

step "audit log joined: analyze --audit-log -o json, ${AUDIT_EVENTS} audit watch events of the users and paths of 2,000 stuck APF rows (targets < 10 s, < 256 MiB peak RSS)"
"$out/bin/wdbench" auditjoin -wd "$out/bin/kubectl-watch_doctor" -dir "$out/dumps" -events "$AUDIT_EVENTS" -runs "$RUNS"

if [[ "$KEEP_DUMPS" == "0" ]]; then
  rm -rf "$out/dumps"
fi
echo
echo "log: ${log#"$root"/}"
