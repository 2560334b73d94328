#!/usr/bin/env bash
# Runs every Go fuzz target with the budget $FUZZTIME (default 30000x).
#
# A budget ending in "x" is a count of executions; anything else is a
# duration. make test uses a count on purpose: with a duration, Go 1.26's fuzz
# coordinator can report a bare "context deadline exceeded" failure at the
# end of the window when a worker is starved of CPU (golang/go#75804, fixed in
# Go 1.27). A count has no deadline to race. For duration runs (make fuzz) a
# failure that is only that message, with no failing input written, is
# reported as the toolchain flake after the target's corpus replays cleanly;
# any other failure fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
budget="${FUZZTIME:-30000x}"
log=$(mktemp /tmp/cairn-fuzz.XXXXXX)
trap 'rm -f "$log"' EXIT

# deadline_flake LOG: true when LOG failed only with the coordinator's
# end-of-window deadline error.
deadline_flake() {
  grep -q 'context deadline exceeded' "$1" &&
    ! grep -qE 'Failing input written|panic:|_test\.go:[0-9]+:' "$1"
}

for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    echo "fuzz: $pkg $target ($budget)"
    if go test "$pkg" -run='^$' -fuzz="^${target}\$" -fuzztime="$budget" >"$log" 2>&1; then
      continue
    fi
    if [[ "$budget" != *x ]] && deadline_flake "$log"; then
      echo "fuzz: $target hit the Go fuzz deadline race (golang/go#75804), no failing input; replaying its corpus"
      go test "$pkg" -run="^${target}\$" -count=1 >"$log" 2>&1 || { cat "$log"; exit 1; }
      continue
    fi
    cat "$log"
    exit 1
  done
done
