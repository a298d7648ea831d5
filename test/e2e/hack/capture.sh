#!/usr/bin/env bash
# Records the seed reproduction on a real kube-apiserver release as testdata:
# two samples, OUT/t1 and OUT/t2, in the layout `analyze` reads (see
# test/e2e/cmd/capture and docs/versions.md).
#
# Usage: test/e2e/hack/capture.sh VERSION OUT [capture flags...]
#   e.g. test/e2e/hack/capture.sh v1.36.3 testdata/kube-apiserver-v1.36.3/seed-repro
#
# The binaries come from hack/build-binaries.sh (KUBE_VERSION=VERSION),
# unless KUBE_APISERVER_BIN and ETCD_BIN are both set. As test/e2e/run.sh
# does, the capture runs in a network namespace of its own whose only
# interface is lo: nothing it starts can reach another host.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
(($# >= 2)) || { echo "usage: $0 VERSION OUT [capture flags...]" >&2; exit 2; }

if [[ -z "${WATCH_DOCTOR_E2E_IN_NETNS:-}" ]]; then
  version="$1"
  out="$(realpath -m "$2")"
  shift 2
  if [[ -z "${KUBE_APISERVER_BIN:-}" || -z "${ETCD_BIN:-}" ]]; then
    eval "$(KUBE_VERSION="${version}" "${here}/hack/build-binaries.sh")"
  fi
  export KUBE_APISERVER_BIN ETCD_BIN
  tmp="$(mktemp -d)"
  trap 'rm -rf "${tmp}"' EXIT
  (cd "${here}" && go build -o "${tmp}/capture" ./cmd/capture)
  export WATCH_DOCTOR_E2E_IN_NETNS=1 CAPTURE_BIN="${tmp}/capture"
  unshare --net -- "${BASH_SOURCE[0]}" "${version}" "${out}" "$@"
  exit
fi

# Inside the namespace.
version="$1" out="$2"
shift 2
ip link set lo up
export WATCH_DOCTOR_E2E_NETNS="$(readlink /proc/self/ns/net)"
echo "capture: ${version} in network namespace ${WATCH_DOCTOR_E2E_NETNS}: $(ip -brief address show | tr -s ' ' | tr '\n' ';')" >&2
# The harness reads deploy/rbac.yaml relative to the test/e2e module.
cd "${here}"
exec "${CAPTURE_BIN}" -out "${out}" "$@"
