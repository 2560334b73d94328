#!/usr/bin/env bash
# The Go suite as `make test-go` runs it: go test over every package, its
# output passed through as it comes and also kept in $TEST_GO_LOG (default
# a temporary file, removed when every test passed). When a test fails,
# the end of the output repeats each failed test's name and the last lines
# it logged itself, so that the reason survives a CI log cut to its tail:
# an end-to-end failure dumps its processes' logs (procs_test.go) after the
# line that says what went wrong.
#
# Usage: scripts/test-go.sh [go test flags and packages]
set -uo pipefail
log=${TEST_GO_LOG:-}
keep=${log:+1}
log=${log:-$(mktemp -t cairn-test-go.XXXXXX)}
"${GO:-go}" test "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
if [ "$rc" != 0 ]; then
  echo
  echo "== go test failed (exit $rc); the whole output is in $log. Each failed test, and the last lines it logged:"
  awk '
    # A failed test block starts at "--- FAIL: Name"; its log lines are
    # indented "file_test.go:N: message". Process dumps are left out.
    function flush() {
      if (name == "") return
      print name
      for (i = (n > 4 ? n - 3 : 1); i <= n; i++) print "    " substr(last[i], 1, 400)
      name = ""; n = 0
    }
    /^[[:space:]]*--- FAIL: / { flush(); name = $0; next }
    /^[[:space:]]*--- (PASS|SKIP): / { flush(); next }
    /^(FAIL|ok)[[:space:]]/ { flush(); if ($1 == "FAIL") print $0; next }
    name != "" && /^[[:space:]]+[A-Za-z0-9_]+\.go:[0-9]+: / && !/procs_test\.go:/ {
      sub(/^[[:space:]]+/, ""); last[++n] = $0
    }
    END { flush() }
  ' "$log"
fi
if [ "$rc" = 0 ] && [ -z "$keep" ]; then rm -f "$log"; fi
exit "$rc"
