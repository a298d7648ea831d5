#!/usr/bin/env bash
# Runs the end-to-end tests: builds (or reuses) kube-apiserver and etcd, then
# runs go test in test/e2e against them. Extra arguments go to go test, e.g.
#   test/e2e/run.sh -run TestDebugEndpointAccess -v
#
# Environment:
#   WATCH_DOCTOR_E2E_CACHE  binary cache root (see hack/build-binaries.sh)
#   E2E_TIMEOUT             go test -timeout (default 30m)
#   E2E_PODS, E2E_PACED_INTERVAL, E2E_KEEP
#                           workload size, paced reader's interval, keep the
#                           cluster's logs (see README.md)
#   WATCH_DOCTOR_BIN        the plugin binary, for the tests that run it
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

env_lines="$("${here}/hack/build-binaries.sh")"
eval "${env_lines}"
export KUBE_APISERVER_BIN ETCD_BIN

"${here}/hack/install-clients.sh"

cd "${here}"
echo "run.sh: KUBE_APISERVER_BIN=${KUBE_APISERVER_BIN} ETCD_BIN=${ETCD_BIN}" >&2
# -count=1: the tests talk to processes the go test cache cannot see.
exec go test -count=1 -timeout "${E2E_TIMEOUT:-30m}" "$@" ./...
