#!/usr/bin/env bash
# Runs every Go fuzz target for $FUZZTIME (default 5s) each.
set -euo pipefail
cd "$(dirname "$0")/.."
t="${FUZZTIME:-5s}"
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    echo "fuzz: $pkg $target ($t)"
    go test "$pkg" -run='^$' -fuzz="^${target}\$" -fuzztime="$t" >/tmp/cairn-fuzz.log 2>&1 || { cat /tmp/cairn-fuzz.log; exit 1; }
  done
done
