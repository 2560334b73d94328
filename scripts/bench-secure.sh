#!/usr/bin/env bash
# bench-secure.sh (make bench-secure): what secure mode costs. `cairn lite`
# plain and `cairn lite --secure` (TLS 1.3, a login, a token checked on every
# call) side by side, alternating, under the same `cairn bench` client:
# throughput, the server's CPU per operation and the client's. The issue's
# bound: secure costs less than 15 % of the throughput of workload C.
#
#   make bench-secure                               # workloads C and A, 2 pairs, 20 s runs
#   REPS=4 WORKLOADS=c DURATION=30 scripts/bench-secure.sh
#   TARGET=cluster WORKLOADS=a scripts/bench-secure.sh   # 3 nodes, RF 3: cluster start [--secure]
#
# Each run: a fresh lite (pinned to core 0 when the machine has two or more
# cores), `cairn bench load` of RECORDS records of 10 x 100 B, then `cairn
# bench run` of the workload for DURATION seconds with THREADS threads
# (pinned to core 1), the secure side with -security ROOT/security/
# client.security (its admin user). The order alternates (plain, secure;
# secure, plain; ...).
#
# With TARGET=cluster each run is a fresh `cairn cluster start` (3 nodes,
# RF 3, 2 shards; `--secure` on the secure side, whose nodes then speak
# mTLS to each other), unpinned, and the server CPU is the three nodes'.
#
# Environment (default): REPS (2), WORKLOADS (c a), DURATION (20), RECORDS
# (50000), THREADS (16), TARGET (lite), BIN (bin/cairn), PORT (5800), OUT
# (results/secure). Writes OUT/summary.tsv and prints the means and ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${REPS:-2} WORKLOADS=${WORKLOADS:-c a} DURATION=${DURATION:-20} RECORDS=${RECORDS:-50000}
THREADS=${THREADS:-16} BIN=${BIN:-bin/cairn} PORT=${PORT:-5800} OUT=${OUT:-results/secure} TARGET=${TARGET:-lite}
case $TARGET in lite | cluster) ;; *) echo "bench-secure.sh: TARGET=$TARGET: want lite or cluster" >&2; exit 2 ;; esac
[ -x "$BIN" ] || { echo "bench-secure.sh: no $BIN: run make build first" >&2; exit 2; }
pin_server=() pin_client=()
if [ "$TARGET" = lite ] && command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then pin_server=(taskset -c 0) pin_client=(taskset -c 1); fi
hz=$(getconf CLK_TCK)
root=$(mktemp -d -t cairn-bench-secure.XXXXXX)
pid=""
cleanup() {
	if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
	if [ -f "$root/s/cluster.json" ]; then "$BIN" cluster stop --root "$root/s" >/dev/null 2>&1 || true; fi
	rm -rf "$root"
}
trap cleanup EXIT
rm -rf "$OUT" && mkdir -p "$OUT"
printf 'rep\tworkload\tside\tops_per_s\tserver_us_per_op\tclient_us_per_op\tload\n' >"$OUT/summary.tsv"

ticks() { # user+system ticks of the given pids
	local t=0 p
	for p in "$@"; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done
	echo "$t"
}

run_one() { # workload side rep
	local w=$1 side=$2 rep=$3 f s0 s1 ops tput c
	local flags=() sec=()
	f="$OUT/$w-$side-$rep"
	local hosts pids
	rm -rf "$root/s"
	if [ "$side" = secure ]; then flags=(--secure) sec=(-security "$root/s/security/client.security"); fi
	if [ "$TARGET" = lite ]; then
		"${pin_server[@]}" "$BIN" lite --root "$root/s" --port "$PORT" "${flags[@]}" >"$f.lite" 2>&1 &
		pid=$!
		for _ in $(seq 200); do grep -q 'ready at' "$f.lite" && break; sleep 0.05; done
		hosts="127.0.0.1:$PORT" pids=$pid
	else
		"$BIN" cluster start --root "$root/s" --nodes 3 --rf 3 --shards 2 --base-port "$PORT" "${flags[@]}" >"$f.lite" 2>&1
		hosts=$(python3 -c "import json;print(','.join(n['addr'] for n in json.load(open('$root/s/cluster.json'))['nodes']))")
		pids=$(python3 -c "import json;print(' '.join(str(n['pid']) for n in json.load(open('$root/s/cluster.json'))['nodes']))")
	fi
	"${pin_client[@]}" "$BIN" bench load -db cairn -P "workloads/workload$w" -p cairn.hosts="$hosts" "${sec[@]}" \
		-p recordcount="$RECORDS" -threads "$THREADS" >"$f.load" 2>&1
	# shellcheck disable=SC2086
	s0=$(ticks $pids)
	/usr/bin/time -f '%U %S' -o "$f.time" "${pin_client[@]}" "$BIN" bench run -db cairn -P "workloads/workload$w" \
		-p cairn.hosts="$hosts" "${sec[@]}" -p recordcount="$RECORDS" -p operationcount=1000000000 \
		-p maxexecutiontime="$DURATION" -p requestdistribution=zipfian -threads "$THREADS" >"$f.run" 2>&1
	# shellcheck disable=SC2086
	s1=$(ticks $pids)
	if [ "$TARGET" = lite ]; then
		kill -TERM "$pid"
		wait "$pid" || true
		pid=""
	else
		"$BIN" cluster stop --root "$root/s" >/dev/null
	fi
	tput=$(awk -F', ' '/\[OVERALL\], Throughput/{printf "%.0f", $3}' "$f.run")
	ops=$(awk -F', ' '/^\[(READ|UPDATE|INSERT|SCAN|READ-MODIFY-WRITE)\], Operations/{n += $3} END {print n + 0}' "$f.run")
	c=$(awk '{print $1 + $2}' "$f.time")
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$rep" "$w" "$side" "$tput" \
		"$(awk -v d=$((s1 - s0)) -v hz="$hz" -v n="$ops" 'BEGIN {printf "%.1f", d / hz * 1e6 / n}')" \
		"$(awk -v c="$c" -v n="$ops" 'BEGIN {printf "%.1f", c * 1e6 / n}')" \
		"$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$OUT/summary.tsv"
}

echo "== $TARGET, workloads $WORKLOADS, $RECORDS records, $THREADS threads, ${DURATION}s runs, $REPS pairs each"
for w in $WORKLOADS; do
	for rep in $(seq "$REPS"); do
		if [ $((rep % 2)) = 1 ]; then run_one "$w" plain "$rep"; run_one "$w" secure "$rep"
		else run_one "$w" secure "$rep"; run_one "$w" plain "$rep"; fi
	done
done
awk -F'\t' 'NR > 1 {k = $2 SUBSEP $3; n[k]++; t[k] += $4; s[k] += $5; c[k] += $6; ws[$2] = 1}
	END {
		for (w in ws) {
			p = w SUBSEP "plain"; q = w SUBSEP "secure"
			if (!n[p] || !n[q]) continue
			printf "workload %s: plain %.0f ops/s (server %.1f, client %.1f us/op); secure %.0f ops/s (server %.1f, client %.1f us/op)\n",
				w, t[p] / n[p], s[p] / n[p], c[p] / n[p], t[q] / n[q], s[q] / n[q], c[q] / n[q]
			printf "workload %s: secure / plain: throughput x%.3f (cost %.1f %%), server CPU/op x%.3f\n",
				w, (t[q] / n[q]) / (t[p] / n[p]), 100 * (1 - (t[q] / n[q]) / (t[p] / n[p])), (s[q] / n[q]) / (s[p] / n[p])
		}
	}' "$OUT/summary.tsv"
