#!/usr/bin/env bash
# Captures the execution-trace fixture (testdata/kube-apiserver-v1.37.2/
# trace-seed) from a real kube-apiserver v1.37.2, in a network namespace of
# its own, as run.sh runs the e2e tests:
#   test/e2e/hack/capture-trace.sh -out DIR [-debug2 DIR2] [-seconds N]
# With KUBE_VERSION set (e.g. v1.38.0-beta.0), that release's, built by
# hack/build-binaries.sh.
# Arguments go to test/e2e/cmd/capture-trace. Relative paths are taken from
# the directory this script is run in.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# Absolute paths: the capture runs from test/e2e.
args=()
for a in "$@"; do
  if [[ "${prev:-}" == -out || "${prev:-}" == -debug2 ]] && [[ "${a}" != /* ]]; then
    a="${PWD}/${a}"
  fi
  args+=("${a}")
  prev="${a}"
done

if [[ -z "${WATCH_DOCTOR_E2E_IN_NETNS:-}" ]]; then
  # setup (network allowed): the binaries (built by build-binaries.sh,
  # unless $KUBE_APISERVER_BIN and $ETCD_BIN name them already), the
  # modules, the compiled program.
  if [[ ! -x "${KUBE_APISERVER_BIN:-}" || ! -x "${ETCD_BIN:-}" ]]; then
    env_lines="$("${here}/hack/build-binaries.sh")"
    eval "${env_lines}"
  fi
  export KUBE_APISERVER_BIN ETCD_BIN
  cd "${here}"
  go mod download
  CAPTURE_TRACE_BIN="$(mktemp -d)/capture-trace"
  export CAPTURE_TRACE_BIN
  go build -o "${CAPTURE_TRACE_BIN}" ./cmd/capture-trace
  if ! out="$(unshare --net -- true 2>&1)"; then
    echo "capture-trace.sh: cannot create a network namespace (unshare --net): ${out}; it never runs on the host's network" >&2
    exit 1
  fi
  export WATCH_DOCTOR_E2E_IN_NETNS=1
  exec unshare --net -- "${here}/hack/capture-trace.sh" "${args[@]}"
fi

# inside the namespace: only lo, up.
ip link set lo up
export WATCH_DOCTOR_E2E_NETNS="$(readlink /proc/self/ns/net)"
export GOPROXY=off
cd "${here}"
trap 'rm -rf "$(dirname "${CAPTURE_TRACE_BIN}")"' EXIT
"${CAPTURE_TRACE_BIN}" "${args[@]}"
