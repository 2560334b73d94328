#!/usr/bin/env bash
# server-ab.sh: two cairn server binaries side by side, alternating, under
# the same `cairn bench` client: throughput, the server's CPU per operation
# (lite's user+system time over the run phase / operations) and the
# client's (the bench process's user+system time / operations).
#
#   go build -o /tmp/cairn-before ./cmd/cairn   # at the commit before
#   make build                                  # the change, as bin/cairn
#   BEFORE=/tmp/cairn-before AFTER=bin/cairn scripts/server-ab.sh
#   REPS=4 WORKLOAD=c LAYOUT=minor DURATION=20 BEFORE=... AFTER=... scripts/server-ab.sh
#
# Each run: a fresh `cairn lite` (pinned to core 0 when the machine has two
# or more), `cairn bench load` of RECORDS records of 10 x 100 B, then
# `cairn bench run` of WORKLOAD for DURATION seconds with THREADS threads
# (pinned to core 1). The order alternates (before, after; after, before...).
# The client is always CLIENT (bin/cairn), so only the server differs;
# CLIENT=same runs each side's own binary as its client too (for a change
# that touches both, such as gRPC options).
# PHASE=load measures the load instead (pinned, RECORDS inserts), and runs
# no workload after it.
#
# BENCH_ARGS adds arguments to both bench commands, such as an update-only
# mix: BENCH_ARGS="-p readproportion=0 -p updateproportion=1". Each line
# also gives lite's peak resident size (VmHWM, MiB).
#
# Environment (default): BEFORE, AFTER (required), REPS (4), WORKLOAD (c),
# LAYOUT (minor), DURATION (20), RECORDS (20000), THREADS (8), PORT (5600),
# CLIENT (bin/cairn), PHASE (run), BENCH_ARGS (""), OUT (results/server-ab).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${BEFORE:?set BEFORE to the binary before the change}" "${AFTER:?set AFTER to the binary after it}"
REPS=${REPS:-4} WORKLOAD=${WORKLOAD:-c} LAYOUT=${LAYOUT:-minor} DURATION=${DURATION:-20}
RECORDS=${RECORDS:-20000} THREADS=${THREADS:-8} PORT=${PORT:-5600} CLIENT=${CLIENT:-bin/cairn}
PHASE=${PHASE:-run}
read -ra bench_args <<<"${BENCH_ARGS:-}"
OUT=${OUT:-results/server-ab}
pin_server=() pin_client=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then pin_server=(taskset -c 0) pin_client=(taskset -c 1); fi
hz=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
rm -rf "$OUT" && mkdir -p "$OUT"
printf 'rep\tside\tops_per_s\tserver_us_per_op\tclient_us_per_op\tload\tpeak_rss_mib\n' >"$OUT/summary.tsv"

run_one() { # side binary rep
	local side=$1 bin=$2 rep=$3 root pid t0 t1 f client=$CLIENT
	[ "$CLIENT" = same ] && client=$bin
	root=$(mktemp -d)
	f="$OUT/$side-$rep"
	"${pin_server[@]}" "$bin" lite --root "$root/s" --port "$PORT" >"$f.lite" 2>&1 &
	pid=$!
	for _ in $(seq 100); do grep -q 'ready at' "$f.lite" && break; sleep 0.1; done
	grep -q 'ready at' "$f.lite" || { cat "$f.lite" >&2; echo "server-ab: lite did not start" >&2; exit 1; }
	local common=(-db cairn -P "workloads/workload$WORKLOAD" -p "cairn.hosts=127.0.0.1:$PORT" -p "cairn.layout=$LAYOUT"
		-p "recordcount=$RECORDS" -p fieldcount=10 -p fieldlength=100 -threads "$THREADS" "${bench_args[@]}")
	if [ "$PHASE" = load ]; then # the load itself is measured, pinned
		t0=$(cpu_ticks "$pid")
		"${pin_client[@]}" /usr/bin/time -f '%U %S' -o "$f.time" "$client" bench load "${common[@]}" >"$f.txt" 2>"$f.err"
		t1=$(cpu_ticks "$pid")
	else
		"$client" bench load "${common[@]}" >"$f.load" 2>&1
		t0=$(cpu_ticks "$pid")
		"${pin_client[@]}" /usr/bin/time -f '%U %S' -o "$f.time" "$client" bench run "${common[@]}" -p operationcount=1000000000 -p "maxexecutiontime=$DURATION" >"$f.txt" 2>"$f.err"
		t1=$(cpu_ticks "$pid")
	fi
	local rss
	rss=$(awk '/^VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/$pid/status")
	kill "$pid" && wait "$pid" 2>/dev/null || true
	rm -rf "$root"
	awk -v side="$side" -v rep="$rep" -v ticks=$((t1 - t0)) -v hz="$hz" -v load="$(cut -d' ' -f1 /proc/loadavg)" -v rss="$rss" \
		-v client="$(awk '{print $1 + $2}' "$f.time")" -F', ' '
		/^\[OVERALL\], RunTime/ {ms = $3} /^\[OVERALL\], Throughput/ {tput = $3}
		END {ops = tput * ms / 1000; printf "%s\t%s\t%.0f\t%.1f\t%.1f\t%s\t%s\n", rep, side, tput, ticks / hz * 1e6 / ops, client * 1e6 / ops, load, rss}' "$f.txt" |
		tee -a "$OUT/summary.tsv"
}

for rep in $(seq "$REPS"); do
	if ((rep % 2)); then run_one before "$BEFORE" "$rep"; run_one after "$AFTER" "$rep"
	else run_one after "$AFTER" "$rep"; run_one before "$BEFORE" "$rep"; fi
done
awk -F'\t' 'NR > 1 {t[$2] += $3; c[$2] += $4; k[$2] += $5; r[$2] += $7; n[$2]++}
	END {for (v in n) printf "mean %s: %.0f ops/s, server %.1f us/op, client %.1f us/op, peak RSS %.0f MiB\n", v, t[v] / n[v], c[v] / n[v], k[v] / n[v], r[v] / n[v]
		printf "after / before: throughput x%.3f, server CPU/op x%.3f\n",
		(t["after"] / n["after"]) / (t["before"] / n["before"]), (c["after"] / n["after"]) / (c["before"] / n["before"])}' "$OUT/summary.tsv"
