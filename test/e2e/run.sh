#!/usr/bin/env bash
# Runs the end-to-end tests. Extra arguments go to go test, e.g.
#   test/e2e/run.sh -run TestDebugEndpointAccess -v
#
# Two phases:
#   1. setup (network allowed): everything that downloads or builds runs on
#      the host's network.
#   2. tests (inside the namespace): run.sh re-enters itself with
#      `unshare --net`, in a network namespace of its own whose only
#      interface is lo; every process of the suite (etcd, kube-apiservers,
#      load balancers, watch clients, the plugin) runs there, so no test
#      packet can leave the machine. The namespace goes away with its last
#      process, whatever the exit path: nothing to clean up.
#
# Environment:
#   WATCH_DOCTOR_E2E_CACHE  binary cache root (see hack/build-binaries.sh)
#   E2E_TIMEOUT             go test -timeout (default 45m)
#   E2E_PARALLEL            go test -parallel: tests run at once (default 3)
#   E2E_PODS, E2E_HA_PODS, E2E_PACED_INTERVAL, E2E_KEEP
#                           workload sizes, paced reader's interval, keep the
#                           clusters' logs (see README.md)
#   WATCH_DOCTOR_BIN        the plugin binary, for the tests that run it
#   E2E_OLDER_KUBE_VERSION  the older kube-apiserver release that
#                           TestOlderMinorDiagnose runs (default v1.36.3)
#   E2E_NEWER_KUBE_VERSION  the newer kube-apiserver release the 1.38 tests
#                           run (default v1.38.0-beta.0)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "${here}"

# Set by this script, inside the namespace, to the namespace's identity;
# TestMain refuses to run without it (cluster.CheckIsolatedNetwork).
netns_var=WATCH_DOCTOR_E2E_NETNS

# Addresses on the namespace's lo: the load balancer, then the three
# kube-apiserver instances of the HA cluster (cluster.LBAddress,
# cluster.InstanceAddresses). TEST-NET-2: they exist only in the namespace.
lo_addresses=(198.51.100.10 198.51.100.11 198.51.100.12 198.51.100.13)

if [[ -z "${WATCH_DOCTOR_E2E_IN_NETNS:-}" ]]; then
  ##########################################################################
  # setup (network allowed)
  #
  # Append here any step that needs the network (package installs,
  # downloads). Export what the tests need: the environment passes into the
  # namespace. Nothing after this section can reach the network.
  ##########################################################################

  # kube-apiserver and etcd, built from the Go module proxy and cached.
  env_lines="$("${here}/hack/build-binaries.sh")"
  eval "${env_lines}"
  export KUBE_APISERVER_BIN ETCD_BIN KUBE_APISERVER_PATCHED_BIN
  echo "run.sh: KUBE_APISERVER_BIN=${KUBE_APISERVER_BIN} ETCD_BIN=${ETCD_BIN} KUBE_APISERVER_PATCHED_BIN=${KUBE_APISERVER_PATCHED_BIN}" >&2

  # The older minor TestOlderMinorDiagnose runs (docs/versions.md): built
  # once from the module proxy like v1.37.2, cached after.
  export E2E_OLDER_KUBE_VERSION="${E2E_OLDER_KUBE_VERSION:-v1.36.3}"
  older_lines="$(KUBE_VERSION="${E2E_OLDER_KUBE_VERSION}" "${here}/hack/build-binaries.sh")"
  KUBE_APISERVER_OLDER_BIN="$(eval "${older_lines}" && printf '%s' "${KUBE_APISERVER_BIN}")"
  export KUBE_APISERVER_OLDER_BIN
  echo "run.sh: KUBE_APISERVER_OLDER_BIN=${KUBE_APISERVER_OLDER_BIN} (${E2E_OLDER_KUBE_VERSION})" >&2

  # The newer release the 1.38 tests run (TestNewerReleaseDiagnose,
  # TestDiagnoseAtScaleByTraceNewerRelease, TestBlockedReplayQuietAndBusy):
  # built once with the Go toolchain its go.mod asks for (go1.27.3 for
  # v1.38, fetched from the module proxy by the go command), cached after.
  export E2E_NEWER_KUBE_VERSION="${E2E_NEWER_KUBE_VERSION:-v1.38.0-beta.0}"
  newer_lines="$(KUBE_VERSION="${E2E_NEWER_KUBE_VERSION}" "${here}/hack/build-binaries.sh")"
  KUBE_APISERVER_NEWER_BIN="$(eval "${newer_lines}" && printf '%s' "${KUBE_APISERVER_BIN}")"
  # And its patched binary (test/e2e/patches/apiserver-v0.38.0-beta.0, our
  # rebase of the stall fix onto 1.38's loop): TestPatchedServers and
  # TestPatchedBlockedReplay run it beside v1.37.2's.
  KUBE_APISERVER_NEWER_PATCHED_BIN="$(unset KUBE_APISERVER_PATCHED_BIN && eval "${newer_lines}" && printf '%s' "${KUBE_APISERVER_PATCHED_BIN:-}")"
  export KUBE_APISERVER_NEWER_BIN KUBE_APISERVER_NEWER_PATCHED_BIN
  echo "run.sh: KUBE_APISERVER_NEWER_BIN=${KUBE_APISERVER_NEWER_BIN} KUBE_APISERVER_NEWER_PATCHED_BIN=${KUBE_APISERVER_NEWER_PATCHED_BIN} (${E2E_NEWER_KUBE_VERSION})" >&2

  # Every module the tests import, and their compiled packages: go vet
  # type-checks the test files too, so the tests build offline afterwards.
  go mod download
  go vet ./...

  # The clients nobody here wrote: curl, kubectl, @kubernetes/client-node.
  "${here}/hack/install-clients.sh"

  # Prometheus and promtool (Debian's prometheus package): TestServeAlertsWithPrometheus.
  "${here}/../../hack/install-promtool.sh"

  # unshare and nsenter (util-linux), ip (iproute2): the namespaces; ss
  # (iproute2): TestTransportGaps reads the kernel's socket queues.
  missing=()
  { command -v ip && command -v ss; } >/dev/null || missing+=(iproute2)
  { command -v unshare && command -v nsenter; } >/dev/null || missing+=(util-linux)
  if ((${#missing[@]} > 0)); then
    echo "run.sh: installing ${missing[*]}" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi

  ##########################################################################
  # Enter the namespace: this script again, from the top, in the new
  # namespace; the next section runs there.
  ##########################################################################
  if ! out="$(unshare --net -- true 2>&1)"; then
    echo "run.sh: cannot create a network namespace (unshare --net): ${out}" >&2
    echo "run.sh: the e2e tests run only in a network namespace of their own, which needs root (CAP_SYS_ADMIN); they never run on the host's network" >&2
    exit 1
  fi
  export WATCH_DOCTOR_E2E_IN_NETNS=1
  exec unshare --net -- "${here}/run.sh" "$@"
fi

##########################################################################
# tests (inside the namespace)
##########################################################################
ip link set lo up
for a in "${lo_addresses[@]}"; do
  ip addr add "${a}/32" dev lo
done
export "${netns_var}=$(readlink /proc/self/ns/net)"
echo "run.sh: in network namespace ${!netns_var}: $(ip -brief address show | tr -s ' ' | tr '\n' ';')" >&2

# No module download from here on: a missing one fails at once.
export GOPROXY=off
# -count=1: the tests talk to processes the go test cache cannot see.
# -parallel: the tests marked t.Parallel() mostly wait (one-minute blocks,
# samples 70 s apart, Prometheus's for-durations), each on a cluster of its
# own; three at a time overlap their waits on two cores (E2E_PARALLEL).
exec go test -count=1 -timeout "${E2E_TIMEOUT:-45m}" -parallel "${E2E_PARALLEL:-3}" "$@" ./...
