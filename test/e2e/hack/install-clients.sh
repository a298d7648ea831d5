#!/usr/bin/env bash
# Installs what the attribution test's third-party clients need, before the
# tests run (the tests themselves may run without network):
#   - curl (with HTTP/2), kubectl and Node.js with npm, from apt when missing;
#   - @kubernetes/client-node at the version pinned by
#     test/e2e/clients/package-lock.json (npm ci).
# Safe to run again: it does nothing when everything is in place.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

missing=()
command -v curl >/dev/null || missing+=(curl)
command -v kubectl >/dev/null || missing+=(kubectl)
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
if ((${#missing[@]} > 0)); then
  echo "install-clients: apt-get install ${missing[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if ! curl --version | grep -qw HTTP2; then
  echo "install-clients: this curl has no HTTP/2 support" >&2
  exit 1
fi

cd "${here}/clients"
if [[ ! -f node_modules/@kubernetes/client-node/package.json ]] ||
  ! cmp -s package-lock.json node_modules/.package-lock.json.installed; then
  echo "install-clients: npm ci in ${here}/clients" >&2
  npm ci --no-audit --no-fund --loglevel=error >&2
  cp package-lock.json node_modules/.package-lock.json.installed
fi
