#!/usr/bin/env bash
# Runs every fuzz target of the module for a bounded amount each.
# Usage: hack/fuzz.sh [FUZZTIME]   go test -fuzztime: a count of inputs
# such as 100000x (the default) or a duration such as 10s
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${1:-100000x}"
status=0
while IFS= read -r file; do
  pkg="./$(dirname "$file")"
  for target in $(grep -oE '^func (Fuzz[A-Za-z0-9_]+)' "$file" | awk '{print $2}'); do
    # A target whose every input runs a whole command against a loopback
    # server says its own count ("// fuzztime: 300x" above its func): a
    # count of inputs asked for is capped at it.
    t="$fuzztime"
    own=$(grep -B1 -E "^func ${target}\(" "$file" | sed -nE 's|^// fuzztime: ([0-9]+x)$|\1|p')
    if [ -n "$own" ] && [[ "$fuzztime" == *x ]] && [ "${fuzztime%x}" -gt "${own%x}" ]; then
      t="$own"
    fi
    echo "== fuzz $pkg $target ($t)" >&2
    if ! go test "$pkg" -run '^$' -fuzz "^${target}\$" -fuzztime "$t"; then
      status=1
    fi
  done
done < <(grep -rl --include='*_test.go' -E '^func Fuzz' pkg internal 2>/dev/null | sort)
exit $status
