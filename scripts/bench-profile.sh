#!/usr/bin/env bash
# bench-profile.sh: CPU profiles of one YCSB configuration. With DB=cairn it
# starts `cairn lite --pprof` on a fresh store, loads it, and during the run
# takes a profile of the server (PROFILE_SECONDS, after 5 s of warm-up) and,
# with cairn.cpuprofile, of the benchmark process. With DB=embedded the one
# process is profiled. It prints the top of each profile.
#
#   scripts/bench-profile.sh c zipfian
#   DB=embedded scripts/bench-profile.sh a uniform
#   LITE_FLAGS="--stream-workers 0 --gc-percent 0" OUT=results/profile-before scripts/bench-profile.sh c zipfian
#
#   go tool pprof -http : bin/cairn results/profile/server-cairn-workloadc-zipfian.pprof
#
# Environment (default): BIN (bin/cairn), OUT (results/profile), DB (cairn),
# PROFILE_SECONDS (20, the server profile's length; the run lasts 10 s more),
# RECORDS (100000), THREADS (16), PORT (5800; PORT+1000 serves profiles),
# LITE_FLAGS ("").
set -euo pipefail

cd "$(dirname "$0")/.."
w=${1:?usage: bench-profile.sh WORKLOAD-LETTER DISTRIBUTION}
dist=${2:?usage: bench-profile.sh WORKLOAD-LETTER DISTRIBUTION}
BIN=${BIN:-bin/cairn}
OUT=${OUT:-results/profile}
DB=${DB:-cairn}
PROFILE_SECONDS=${PROFILE_SECONDS:-20}
RECORDS=${RECORDS:-100000}
THREADS=${THREADS:-16}
PORT=${PORT:-5800}
LITE_FLAGS=${LITE_FLAGS:-}

mkdir -p "$OUT"
root=$(mktemp -d /tmp/cairn-bench-profile.XXXXXX)
lite=""
trap '[[ -n $lite ]] && kill -TERM $lite 2>/dev/null && wait $lite 2>/dev/null; rm -rf "$root"' EXIT

name="$DB-workload$w-$dist"
args=(-P "workloads/workload$w" -p recordcount="$RECORDS" -p fieldcount=10 -p fieldlength=100
	-p requestdistribution="$dist" -threads "$THREADS")
if [[ $DB == cairn ]]; then
	# shellcheck disable=SC2086 # LITE_FLAGS is a list of flags
	"$BIN" lite --root "$root/store" --port "$PORT" --pprof "127.0.0.1:$((PORT + 1000))" --log-level warn $LITE_FLAGS \
		>"$root/lite.out" 2>&1 &
	lite=$!
	for _ in $(seq 100); do grep -q ready "$root/lite.out" 2>/dev/null && break; sleep 0.1; done
	args+=(-db cairn -p cairn.hosts="127.0.0.1:$PORT")
else
	args+=(-db embedded -p cairn.root="$root/store")
fi
"$BIN" bench load "${args[@]}" >/dev/null 2>&1
"$BIN" bench run "${args[@]}" -p operationcount=1000000000 -p maxexecutiontime=$((PROFILE_SECONDS + 10)) \
	-p cairn.cpuprofile="$OUT/bench-$name.pprof" >"$OUT/run-$name.txt" 2>/dev/null &
run=$!
if [[ $DB == cairn ]]; then
	sleep 5
	curl -sf -o "$OUT/server-$name.pprof" "http://127.0.0.1:$((PORT + 1000))/debug/pprof/profile?seconds=$PROFILE_SECONDS"
fi
wait $run
grep -E '^\[OVERALL\], Throughput' "$OUT/run-$name.txt"
for p in "$OUT/server-$name.pprof" "$OUT/bench-$name.pprof"; do
	[[ -f $p ]] || continue
	echo "== $p"
	go tool pprof -top -cum -nodecount=40 "$BIN" "$p" 2>/dev/null | sed -n '4,50p' | cut -c1-160
done
