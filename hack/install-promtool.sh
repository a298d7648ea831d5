#!/usr/bin/env bash
# Installs promtool and prometheus (Debian's `prometheus` package) when
# promtool is missing: `make test` runs `promtool test rules` on the
# shipped alerts, and the serve e2e runs a real Prometheus. CI runs as root
# on Debian; elsewhere sudo is used when present.
set -euo pipefail
if command -v promtool >/dev/null 2>&1 && command -v prometheus >/dev/null 2>&1; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-promtool: promtool is missing and apt-get is not available: install Prometheus's promtool (Debian package prometheus)" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
  sudo=sudo
fi
echo "install-promtool: installing Debian's prometheus package (promtool)" >&2
$sudo apt-get update -qq >&2
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends prometheus >&2
# The package's service is not wanted here: it is started by tests only.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet prometheus 2>/dev/null; then
  $sudo systemctl stop prometheus || true
fi
command -v promtool >/dev/null
