#!/usr/bin/env bash
# Checks .krew.yaml: it must name the sha256 of the archives `make dist`
# just built (so the committed manifest matches reproducible builds), each
# archive must hold the binary and LICENSE, and krew's own
# validate-krew-manifest (pinned) must accept it. The install step of that
# tool downloads the release URIs, which this machine cannot reach, so it
# runs with -skip-install; the archives are checked here instead.
# Usage: hack/validate-krew.sh KREW_VERSION
set -euo pipefail
cd "$(dirname "$0")/.."
krew_version="${1:?krew version}"
git ls-files --error-unmatch .krew.yaml >/dev/null 2>&1 || {
  echo ".krew.yaml is not committed: run make dist and commit it" >&2
  exit 1
}
git diff --exit-code --quiet -- .krew.yaml || {
  echo ".krew.yaml differs from the committed one after make dist: the release archives changed; commit the new .krew.yaml" >&2
  git --no-pager diff -- .krew.yaml >&2
  exit 1
}
for f in dist/*.tar.gz; do
  listing=$(tar -tzf "$f")
  grep -qx 'LICENSE' <<<"$listing" || { echo "$f: no LICENSE" >&2; exit 1; }
  grep -qE '^kubectl-watch_doctor(\.exe)?$' <<<"$listing" || { echo "$f: no binary" >&2; exit 1; }
done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cp .krew.yaml "$tmp/watch-doctor.yaml"
GOFLAGS=-mod=mod go run "sigs.k8s.io/krew/cmd/validate-krew-manifest@$krew_version" \
  -manifest "$tmp/watch-doctor.yaml" -skip-install
echo ".krew.yaml is valid and matches dist/" >&2
