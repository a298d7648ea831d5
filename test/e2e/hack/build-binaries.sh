#!/usr/bin/env bash
# Builds the kube-apiserver and etcd binaries the end-to-end tests run, from
# the Go module proxy at pinned versions, and caches them.
#
# Usage: hack/build-binaries.sh
#        KUBE_VERSION=v1.36.3 hack/build-binaries.sh
#        KUBE_VERSION=v1.38.0-beta.0 hack/build-binaries.sh
#
# Progress goes to stderr. On success stdout carries exactly three lines, shell
# assignments that a caller can eval:
#   KUBE_APISERVER_BIN=/path/to/kube-apiserver-v1.37.2
#   ETCD_BIN=/path/to/etcd-v3.7.3
#   KUBE_APISERVER_PATCHED_BIN=/path/to/kube-apiserver-v1.37.2-stallfix-<hash>
# (the last one built with test/e2e/patches; see build_kube_apiserver_patched)
#
# With KUBE_VERSION set to another release (docs/versions.md lists the proven
# ones) it builds that kube-apiserver and etcd, and stdout carries two lines:
#   KUBE_APISERVER_BIN=/path/to/kube-apiserver-v1.36.3
#   ETCD_BIN=/path/to/etcd-v3.7.3
# and a third, KUBE_APISERVER_PATCHED_BIN, for a release that has stall-fix
# patches of its own (test/e2e/patches/apiserver-<staging version>: v1.37.2,
# and v1.38.0-beta.0 with watch-doctor's rebase onto 1.38's watcher loop):
#   KUBE_APISERVER_PATCHED_BIN=/path/to/kube-apiserver-v1.38.0-beta.0-stallfix-<hash>
#
# Environment:
#   WATCH_DOCTOR_E2E_CACHE  cache root (default $HOME/.cache/watch-doctor-e2e);
#                           binaries live in $WATCH_DOCTOR_E2E_CACHE/bin and
#                           are rebuilt only when missing.
#   E2E_REBUILD=1           rebuild even when a cached binary exists.
#   KUBE_VERSION            the k8s.io/kubernetes release to build
#                           (default v1.37.2), v1.<minor>.<patch> or a
#                           pre-release v1.<minor>.<patch>-{alpha,beta,rc}.<n>.
#   KUBE_GOTOOLCHAIN        the Go toolchain for a release whose go.mod needs
#                           a newer Go than the local one (default: the one
#                           pinned below for that Go minor, e.g. go1.27.3).
#
# Toolchains: every build runs with GOTOOLCHAIN=local, except a kube-apiserver
# whose k8s.io/kubernetes go.mod says `go 1.N` newer than the local go: that
# build alone runs with GOTOOLCHAIN set to the toolchain pinned for Go 1.N
# (pinned_toolchain), which the go command fetches from the module proxy once
# and caches in the module cache.
set -euo pipefail

readonly DEFAULT_KUBE_VERSION="v1.37.2"
readonly KUBE_VERSION="${KUBE_VERSION:-${DEFAULT_KUBE_VERSION}}"
[[ "${KUBE_VERSION}" =~ ^v1\.[0-9]+\.[0-9]+(-(alpha|beta|rc)\.[0-9]+)?$ ]] || {
  printf 'build-binaries: error: KUBE_VERSION %q is not a release like v1.36.3 or v1.38.0-beta.0\n' "${KUBE_VERSION}" >&2
  exit 1
}
# The staging modules (k8s.io/api, k8s.io/client-go, ...) are released as
# v0.<minor>.<patch>[-<pre>] alongside k8s.io/kubernetes
# v1.<minor>.<patch>[-<pre>] (v1.38.0-beta.0 -> v0.38.0-beta.0).
readonly STAGING_VERSION="v0${KUBE_VERSION#v1}"
readonly ETCD_VERSION="v3.7.3"
# Version stamps for kube-apiserver's /version. They match the fixtures in
# shared/fixtures/kube-apiserver-v1.37.2 (captured from a binary built this way).
readonly KUBE_GIT_COMMIT="0000000000000000000000000000000000000000"
readonly KUBE_BUILD_DATE="${KUBE_BUILD_DATE:-2026-11-01T00:00:00Z}"

readonly CACHE="${WATCH_DOCTOR_E2E_CACHE:-${HOME}/.cache/watch-doctor-e2e}"
readonly BIN_DIR="${CACHE}/bin"
readonly BUILD_DIR="${CACHE}/build"
readonly PATCHES_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/../patches" && pwd)"

# Builds never pick up a toolchain other than the one installed here, and never
# a workspace or vendor directory of whatever repository we are called from.
export GOTOOLCHAIN=local GOWORK=off GOFLAGS=-mod=mod

log() { printf 'build-binaries: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# pinned_toolchain GO_MINOR prints the toolchain a build needing Go 1.<minor>
# runs with: the release kube-apiserver of that generation is built with, so
# the binary's runtime (scheduler, trace format, goroutine dump) is the one
# users run. Unknown minors fail rather than guess.
pinned_toolchain() {
  case "$1" in
    27) printf 'go1.27.3' ;;
    *) return 1 ;;
  esac
}

# go_minor VERSION prints the minor of a Go version (1.27.0, go1.26.8 -> 27, 26).
go_minor() {
  local v="${1#go}"
  v="${v#1.}"
  printf '%s' "${v%%[.a-z]*}"
}

# toolchain_for GOMOD prints the GOTOOLCHAIN value to build GOMOD's module
# with: local when the local go is new enough for its go directive, else
# $KUBE_GOTOOLCHAIN or the toolchain pinned for that Go minor.
toolchain_for() {
  local gomod="$1" want have
  want="$(go mod edit -json "${gomod}" | jq -r '.Go // empty')"
  [[ -n "${want}" ]] || die "no go directive in ${gomod}"
  have="$(GOTOOLCHAIN=local go env GOVERSION)"
  if (($(go_minor "${want}") <= $(go_minor "${have}"))); then
    printf 'local'
    return
  fi
  if [[ -n "${KUBE_GOTOOLCHAIN:-}" ]]; then
    printf '%s' "${KUBE_GOTOOLCHAIN}"
    return
  fi
  pinned_toolchain "$(go_minor "${want}")" ||
    die "${gomod} needs go ${want} (local: ${have}) and no toolchain is pinned for it; set KUBE_GOTOOLCHAIN"
}

command -v go >/dev/null || die "go is not on PATH"
# jq reads `go mod download -json`; git applies the patches. From apt when
# missing (a fresh CI machine), like the e2e's other tools.
missing=()
command -v jq >/dev/null || missing+=(jq)
command -v git >/dev/null || missing+=(git)
if ((${#missing[@]} > 0)); then
  command -v apt-get >/dev/null || die "missing ${missing[*]}, and no apt-get to install them"
  log "apt-get install ${missing[*]}"
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# new_build_module DIR MODULE_NAME: (re)creates DIR holding an empty go.mod
# whose go directive matches the local toolchain.
new_build_module() {
  local dir="$1" name="$2"
  rm -rf "${dir}"
  mkdir -p "${dir}"
  (cd "${dir}" && go mod init "${name}" >/dev/null 2>&1)
}

# install_binary SRC DEST: moves a freshly built binary into the cache
# atomically, so an interrupted build never leaves a half-written binary.
install_binary() {
  local src="$1" dest="$2"
  mkdir -p "${BIN_DIR}"
  chmod 0755 "${src}"
  mv -f "${src}" "${dest}"
  log "installed ${dest} ($(du -h "${dest}" | cut -f1))"
}

# kube_apiserver_ldflags prints the -ldflags of the kube-apiserver builds:
# stripped, with the version stamps of /version.
kube_apiserver_ldflags() {
  local v="k8s.io/component-base/version"
  local cv="k8s.io/client-go/pkg/version"
  local minor="${KUBE_VERSION#v1.}"
  minor="${minor%%.*}"
  local ldflags="-s -w"
  local p
  for p in "${v}" "${cv}"; do
    ldflags+=" -X ${p}.gitMajor=1 -X ${p}.gitMinor=${minor}"
    ldflags+=" -X ${p}.gitVersion=${KUBE_VERSION} -X ${p}.gitCommit=${KUBE_GIT_COMMIT}"
    ldflags+=" -X ${p}.gitTreeState=clean -X ${p}.buildDate=${KUBE_BUILD_DATE}"
  done
  printf '%s' "${ldflags}"
}

build_kube_apiserver() {
  local dest="${BIN_DIR}/kube-apiserver-${KUBE_VERSION}"
  if [[ -x "${dest}" && "${E2E_REBUILD:-0}" != 1 ]]; then
    log "cached: ${dest}"
    return
  fi
  local start=${SECONDS}
  log "downloading k8s.io/kubernetes@${KUBE_VERSION}"
  local info gomod
  # A release needing a newer Go than the local one fails here with "requires
  # go >= 1.N" after its go.mod is downloaded; read that go.mod to choose the
  # toolchain, then download again with it.
  info="$(cd "${BUILD_DIR}" && go mod download -json "k8s.io/kubernetes@${KUBE_VERSION}" || true)"
  gomod="$(jq -r '.GoMod // empty' <<<"${info}")"
  [[ -f "${gomod}" ]] || die "no go.mod for k8s.io/kubernetes@${KUBE_VERSION} in the module cache: $(jq -r '.Error // empty' <<<"${info}")"
  local toolchain
  toolchain="$(toolchain_for "${gomod}")"
  # For this function and the ones it calls only (local -x).
  local -x GOTOOLCHAIN="${toolchain}"
  if [[ "${GOTOOLCHAIN}" != local ]]; then
    log "k8s.io/kubernetes@${KUBE_VERSION} needs go $(go mod edit -json "${gomod}" | jq -r .Go); building it with GOTOOLCHAIN=${GOTOOLCHAIN} ($(go version))"
  fi
  info="$(cd "${BUILD_DIR}" && go mod download -json "k8s.io/kubernetes@${KUBE_VERSION}")" ||
    die "downloading k8s.io/kubernetes@${KUBE_VERSION}: $(jq -r '.Error // empty' <<<"${info}")"

  # k8s.io/kubernetes replaces each staging module with a directory that its
  # module zip does not contain. Derive that list from its own go.mod and
  # point each one at the matching published release instead.
  local -a staging
  mapfile -t staging < <(go mod edit -json "${gomod}" |
    jq -r '.Replace[]? | select(.New.Path | startswith("./staging/")) | .Old.Path')
  ((${#staging[@]} > 0)) || die "found no ./staging replacements in ${gomod}"
  log "k8s.io/kubernetes@${KUBE_VERSION} has ${#staging[@]} staging modules; replacing them with their ${STAGING_VERSION} releases"

  # The main module's godebug settings decide the binary's GODEBUG defaults;
  # carry over the ones upstream builds with.
  local -a godebug
  mapfile -t godebug < <(go mod edit -json "${gomod}" | jq -r '.GoDebug[]? | "\(.Key)=\(.Value)"')

  local mod="${BUILD_DIR}/kube-apiserver-${KUBE_VERSION}"
  new_build_module "${mod}" "watch-doctor.invalid/e2e-build/kube-apiserver"
  local -a edits=("-require=k8s.io/kubernetes@${KUBE_VERSION}")
  local m g
  for m in "${staging[@]}"; do
    edits+=("-replace=${m}=${m}@${STAGING_VERSION}")
  done
  for g in "${godebug[@]}"; do
    edits+=("-godebug=${g}")
  done
  (cd "${mod}" && go mod edit "${edits[@]}")

  local pkg="k8s.io/kubernetes/cmd/kube-apiserver"
  local ldflags
  ldflags="$(kube_apiserver_ldflags)"

  log "resolving dependencies of ${pkg} in ${mod}"
  (cd "${mod}" && go get "${pkg}@${KUBE_VERSION}" >&2 2>&1)
  log "building ${pkg} (takes several minutes on a cold cache)"
  (cd "${mod}" && CGO_ENABLED=0 go build -trimpath -ldflags "${ldflags}" \
    -o "${mod}/kube-apiserver" "${pkg}")
  install_binary "${mod}/kube-apiserver" "${dest}"
  log "kube-apiserver built in $((SECONDS - start))s"
}

# build_kube_apiserver_patched builds kube-apiserver with watch-doctor's own
# patches to k8s.io/apiserver (test/e2e/patches/apiserver-<version>/*.patch,
# see test/e2e/README.md): one binary whose stall fix is chosen at start by
# $WATCH_DOCTOR_STALL_FIX (off, pr141899, complete) and
# $WATCH_DOCTOR_STALL_TIMEOUT. Its name carries a hash of the patches, so an
# edited patch is rebuilt.
#
# The patches are applied to a copy of the module from the module cache, and
# a copy of build_kube_apiserver's build module `replace`s k8s.io/apiserver
# with it. With -trimpath a replaced module's files are still named
# k8s.io/apiserver@<version>/... (cmd/go trims to the required version), so
# the packages the patches do not touch compile to the same cache entries as
# the base build's and are reused.
build_kube_apiserver_patched() {
  local patches=("${PATCHES_DIR}/apiserver-${STAGING_VERSION}"/*.patch)
  [[ -f "${patches[0]}" ]] || die "no patches in ${PATCHES_DIR}/apiserver-${STAGING_VERSION}"
  local sum
  sum="$(cat "${patches[@]}" | sha256sum | cut -c1-12)"
  local dest="${BIN_DIR}/kube-apiserver-${KUBE_VERSION}-stallfix-${sum}"
  PATCHED_BIN="${dest}"
  if [[ -x "${dest}" && "${E2E_REBUILD:-0}" != 1 ]]; then
    log "cached: ${dest}"
    return
  fi
  local start=${SECONDS}
  local base="${BUILD_DIR}/kube-apiserver-${KUBE_VERSION}"
  if [[ ! -f "${base}/go.sum" ]]; then
    # A cached base binary whose build module was removed: recreate it
    # (the Go build cache makes this cheap when it is warm).
    log "no build module in ${base}; rebuilding the base kube-apiserver first"
    E2E_REBUILD=1 build_kube_apiserver
  fi
  # The toolchain of the base build (go1.27.3 for v1.38): its build module's
  # go directive is the one k8s.io/kubernetes asked for. For this function
  # and the ones it calls only (local -x).
  local -x GOTOOLCHAIN
  GOTOOLCHAIN="$(toolchain_for "${base}/go.mod")"
  if [[ "${GOTOOLCHAIN}" != local ]]; then
    log "building the patched kube-apiserver with GOTOOLCHAIN=${GOTOOLCHAIN}"
  fi
  local src
  src="$(cd "${base}" && go mod download -json "k8s.io/apiserver@${STAGING_VERSION}" | jq -r '.Dir')"
  [[ -d "${src}" ]] || die "k8s.io/apiserver@${STAGING_VERSION} is not in the module cache"
  local copy="${BUILD_DIR}/apiserver-${STAGING_VERSION}-patched"
  rm -rf "${copy}"
  cp -r "${src}" "${copy}"
  chmod -R u+w "${copy}"
  local p
  for p in "${patches[@]}"; do
    log "applying $(basename "${p}")"
    # git apply works outside a repository too, and refuses a patch that
    # does not apply exactly.
    (cd "${copy}" && git apply -p1 "${p}") || die "patch ${p} does not apply to k8s.io/apiserver@${STAGING_VERSION}"
  done
  local mod="${BUILD_DIR}/kube-apiserver-${KUBE_VERSION}-stallfix"
  rm -rf "${mod}"
  mkdir -p "${mod}"
  cp "${base}/go.mod" "${base}/go.sum" "${mod}/"
  (cd "${mod}" && go mod edit "-replace=k8s.io/apiserver=${copy}")
  log "building patched kube-apiserver in ${mod}"
  local ldflags
  ldflags="$(kube_apiserver_ldflags)"
  (cd "${mod}" && CGO_ENABLED=0 go build -trimpath -ldflags "${ldflags}" \
    -o "${mod}/kube-apiserver" "k8s.io/kubernetes/cmd/kube-apiserver")
  install_binary "${mod}/kube-apiserver" "${dest}"
  log "patched kube-apiserver built in $((SECONDS - start))s"
}

# build_etcd holds etcd's own lock (every release shares etcd) while it
# checks and builds, and only then.
build_etcd() {
  exec 8>"${CACHE}/.build-etcd-${ETCD_VERSION}.lock"
  if command -v flock >/dev/null; then
    flock 8
  fi
  build_etcd_locked
  exec 8>&-
}

build_etcd_locked() {
  local dest="${BIN_DIR}/etcd-${ETCD_VERSION}"
  if [[ -x "${dest}" && "${E2E_REBUILD:-0}" != 1 ]]; then
    log "cached: ${dest}"
    return
  fi
  local start=${SECONDS}
  # go.etcd.io/etcd/server/v3 is itself the etcd main package (main.go calls
  # etcdmain.Main). Its go.mod replaces its sibling modules with relative
  # directories, so `go install pkg@version` refuses it; build it from a
  # throwaway module instead, where the siblings resolve to their releases.
  local pkg="go.etcd.io/etcd/server/v3"
  local mod="${BUILD_DIR}/etcd-${ETCD_VERSION}"
  new_build_module "${mod}" "watch-doctor.invalid/e2e-build/etcd"
  log "resolving dependencies of ${pkg}@${ETCD_VERSION} in ${mod}"
  (cd "${mod}" && go get "${pkg}@${ETCD_VERSION}" >&2 2>&1)
  log "building ${pkg}"
  (cd "${mod}" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" \
    -o "${mod}/etcd" "${pkg}")
  install_binary "${mod}/etcd" "${dest}"
  log "etcd built in $((SECONDS - start))s"
}

main() {
  mkdir -p "${BIN_DIR}" "${BUILD_DIR}"
  # One build at a time per release and cache (two test runs started
  # together would otherwise both build into the same directories); builds
  # of different releases, each minutes long, do not wait for each other.
  # etcd, which every release shares, has a lock of its own (build_etcd).
  exec 9>"${CACHE}/.build-${KUBE_VERSION}.lock"
  if command -v flock >/dev/null; then
    flock 9
  fi
  log "cache: ${CACHE} ($(go version))"
  build_etcd
  build_kube_apiserver
  # The default release always has its patches; another release has them
  # when test/e2e/patches holds a directory for its staging version.
  local PATCHED_BIN=""
  if [[ "${KUBE_VERSION}" == "${DEFAULT_KUBE_VERSION}" || -d "${PATCHES_DIR}/apiserver-${STAGING_VERSION}" ]]; then
    build_kube_apiserver_patched
  fi
  printf 'KUBE_APISERVER_BIN=%q\n' "${BIN_DIR}/kube-apiserver-${KUBE_VERSION}"
  printf 'ETCD_BIN=%q\n' "${BIN_DIR}/etcd-${ETCD_VERSION}"
  if [[ -n "${PATCHED_BIN}" ]]; then
    printf 'KUBE_APISERVER_PATCHED_BIN=%q\n' "${PATCHED_BIN}"
  fi
}

main "$@"
