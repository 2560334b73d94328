#!/usr/bin/env bash
# Runs the robustness tests (test/robustness) over and over, each round with
# a new random seed, for $CHAOS_TIME (default 10m; Go-style s, m or h).
# Stops at the first failure and prints the seed, the artifacts and the
# command that reruns the failed test with that seed.
#
#   CHAOS_TIME=1h ./scripts/chaos.sh
#   CHAOS_RUN=TestPartitionedLeader ./scripts/chaos.sh   # one test only
#
# TestStorageFaultsUnderLoad runs rounds of storage faults for
# $CHAOS_STORAGE_TIME (default 60s) each time, instead of its 10 s in
# make test. It mounts a tmpfs for its full-disk rounds when it can (root).
# TestMoveFaults and TestReplicaFaults run all of their fault scenarios
# (six and seven) each time (-move.fault=all -replica.fault=all), instead of the one of each
# that make test picks by the seed.
#
# CAIRN_BIN names the cairn binary under test (default: built once here).
# Each round's artifacts (node logs, histories, porcupine visualizations of
# failed checks) go to $CHAOS_DIR/round-N (default: a new temporary dir).
set -euo pipefail
cd "$(dirname "$0")/.."

chaos_time="${CHAOS_TIME:-10m}"
run="${CHAOS_RUN:-.}"
storage_time="${CHAOS_STORAGE_TIME:-60s}"
go="${GO:-go}"

seconds() { # 90s, 10m, 1h, or a bare number of seconds
  local d="$1"
  case "$d" in
    *h) echo $(( ${d%h} * 3600 )) ;;
    *m) echo $(( ${d%m} * 60 )) ;;
    *s) echo $(( ${d%s} )) ;;
    *) echo $(( d )) ;;
  esac
}
budget=$(seconds "$chaos_time")

dir="${CHAOS_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/cairn-chaos-XXXXXX")}"
mkdir -p "$dir"
if [[ -z "${CAIRN_BIN:-}" ]]; then
  "$go" build -o "$dir/cairn" ./cmd/cairn
  CAIRN_BIN="$dir/cairn"
fi
export CAIRN_BIN
"$go" test -c -o "$dir/robustness.test" ./test/robustness/

echo "chaos: running test/robustness ($run) with random seeds for $chaos_time; logs in $dir"
start=$SECONDS
round=0
while (( SECONDS - start < budget )); do
  round=$((round + 1))
  # A 62-bit seed from the kernel (never 0, which means "from the clock").
  seed=$(( $(od -An -N8 -tu8 /dev/urandom | tr -d ' ') & 0x3fffffffffffffff | 1 ))
  out="$dir/round-$round"
  mkdir -p "$out"
  if (cd test/robustness && CAIRN_ARTIFACTS="$out" "$dir/robustness.test" \
        -test.run "$run" -test.count=1 -test.v -test.timeout=10m -seed="$seed" \
        -storagefaults.time="$storage_time" -move.fault=all -replica.fault=all) >"$out/test.log" 2>&1; then
    echo "chaos: round $round (seed $seed) passed after $((SECONDS - start))s"
    continue
  fi
  failed=$(grep -oE '^--- FAIL: [A-Za-z0-9_/]+' "$out/test.log" | head -1 | sed 's/^--- FAIL: //; s|/.*||')
  echo
  echo "chaos: round $round FAILED (seed $seed) after $((SECONDS - start))s"
  echo "---- last 60 lines of $out/test.log ----"
  tail -n 60 "$out/test.log"
  echo "----"
  echo "failed test: ${failed:-unknown (see the log)}"
  echo "seed:        $seed"
  echo "log:         $out/test.log"
  echo "artifacts:   $out"
  echo "reproduce:   go test ./test/robustness/ -run '^${failed:-.*}\$' -count=1 -v -seed=$seed -storagefaults.time=$storage_time -move.fault=all -replica.fault=all"
  exit 1
done
echo "chaos: $round rounds passed in $((SECONDS - start))s"
