#!/usr/bin/env bash
# bench-lite.sh: YCSB workloads A, B and C, zipfian and uniform, against
# `cairn lite` over loopback (-db cairn) and against the same store opened in
# the benchmark's own process (-db embedded), so that the network's share of
# the cost shows. Every configuration gets a fresh root: load, then run.
#
#   make bench-lite                       # the whole matrix, about 8 minutes
#   DURATION=60 make bench-lite           # longer runs
#   DBS=cairn WORKLOADS=c DISTS=zipfian scripts/bench-lite.sh
#   LITE_FLAGS="--stream-workers 0 --gc-percent 0" OUT=results/before scripts/bench-lite.sh
#
# Writes OUT/{load,run}-DB-WORKLOAD-DIST.json (cairn bench's result
# documents), OUT/*.txt (their YCSB text summaries), OUT/summary.tsv (one
# line per phase, appended to: throughput and the CPU seconds used by the benchmark
# process, by the lite server, and by everything else on the machine,
# hypervisor steal included, which says how noisy the run was) and
# OUT/report.html (cairn bench report over this invocation's documents).
#
# Environment (default):
#   BIN        the cairn binary (bin/cairn; built by make bench-lite)
#   OUT        results directory (results)
#   DURATION   seconds per run phase (30)
#   RECORDS    records loaded (100000); 10 fields of 100 bytes each (1 KB)
#   THREADS    client threads (16)
#   WORKLOADS  workloads, by letter (a b c)
#   DISTS      request distributions (zipfian uniform)
#   DBS        bindings (cairn embedded)
#   PORT       the lite node's port (5500); PORT+1000 serves its profiles
#   LITE_FLAGS extra flags for cairn lite ("")
#   ROOT       where stores are created (a temporary directory)
set -euo pipefail

cd "$(dirname "$0")/.."
BIN=${BIN:-bin/cairn}
OUT=${OUT:-results}
DURATION=${DURATION:-30}
RECORDS=${RECORDS:-100000}
THREADS=${THREADS:-16}
WORKLOADS=${WORKLOADS:-a b c}
DISTS=${DISTS:-zipfian uniform}
DBS=${DBS:-cairn embedded}
PORT=${PORT:-5500}
LITE_FLAGS=${LITE_FLAGS:-}
ROOT=${ROOT:-$(mktemp -d /tmp/cairn-bench-lite.XXXXXX)}

mkdir -p "$OUT"
LITE_PID=""
stop_lite() {
	if [[ -n $LITE_PID ]]; then
		kill -TERM "$LITE_PID" 2>/dev/null || true
		wait "$LITE_PID" 2>/dev/null || true
		LITE_PID=""
	fi
}
trap 'stop_lite; rm -rf "$ROOT"' EXIT

# cpu_jiffies PID: user+system clock ticks a process has used.
cpu_jiffies() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# busy_jiffies: clock ticks all CPUs spent busy (not idle or iowait).
busy_jiffies() { awk '/^cpu /{print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat; }
HZ=$(getconf CLK_TCK)

start_lite() { # start_lite DIR
	# shellcheck disable=SC2086 # LITE_FLAGS is a list of flags
	"$BIN" lite --root "$1" --port "$PORT" --pprof "127.0.0.1:$((PORT + 1000))" --log-level warn $LITE_FLAGS \
		>"$1.out" 2>&1 &
	LITE_PID=$!
	for _ in $(seq 100); do
		grep -q ready "$1.out" 2>/dev/null && return 0
		sleep 0.1
	done
	cat "$1.out" >&2
	echo "bench-lite: cairn lite did not start" >&2
	return 1
}

common=(-p recordcount="$RECORDS" -p fieldcount=10 -p fieldlength=100 -threads "$THREADS")

# bench PHASE DB WORKLOAD DIST DIR: one phase; prints the summary line.
bench() {
	local phase=$1 db=$2 w=$3 dist=$4 dir=$5
	local name="$phase-$db-workload$w-$dist"
	written+=("$OUT/$name.json")
	local args=("${common[@]}" -P "workloads/workload$w" -p requestdistribution="$dist" -p exportfile="$OUT/$name.json")
	if [[ $db == cairn ]]; then
		args+=(-db cairn -p cairn.hosts="127.0.0.1:$PORT")
	else
		args+=(-db embedded -p cairn.root="$dir")
	fi
	if [[ $phase == run ]]; then
		args+=(-p operationcount=1000000000 -p maxexecutiontime="$DURATION")
	fi
	local s0=0 s1=0 b0 b1 t
	[[ -n $LITE_PID ]] && s0=$(cpu_jiffies "$LITE_PID")
	b0=$(busy_jiffies)
	t=$( { TIMEFORMAT='%U %S'; time "$BIN" bench "$phase" "${args[@]}" >"$OUT/$name.txt" 2>"$OUT/$name.err"; } 2>&1 )
	b1=$(busy_jiffies)
	[[ -n $LITE_PID ]] && s1=$(cpu_jiffies "$LITE_PID")
	local tput bench_cpu server_cpu other_cpu
	tput=$(awk -F', ' '/^\[OVERALL\], Throughput/{printf "%.0f", $3}' "$OUT/$name.txt")
	bench_cpu=$(awk '{printf "%.2f", $1 + $2}' <<<"$t")
	server_cpu=$(awk -v d=$((s1 - s0)) -v hz="$HZ" 'BEGIN{printf "%.2f", d / hz}')
	other_cpu=$(awk -v d=$((b1 - b0)) -v hz="$HZ" -v a="$bench_cpu" -v b="$server_cpu" 'BEGIN{o = d / hz - a - b; printf "%.2f", o < 0 ? 0 : o}')
	printf '%s\t%s\tworkload%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$phase" "$db" "$w" "$dist" "$tput" "$bench_cpu" "$server_cpu" "$other_cpu" \
		"$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$OUT/summary.tsv"
}

written=()
if [[ ! -s $OUT/summary.tsv ]]; then
	printf 'phase\tdb\tworkload\tdist\tops_per_sec\tbench_cpu_s\tserver_cpu_s\tother_cpu_s\tloadavg\n' >"$OUT/summary.tsv"
fi
echo "bench-lite: $("$BIN" --version), $(nproc) CPUs, ${DURATION}s runs, $RECORDS records, $THREADS threads; lite flags: ${LITE_FLAGS:-none}"
for db in $DBS; do
	for w in $WORKLOADS; do
		for dist in $DISTS; do
			dir="$ROOT/$db-$w-$dist"
			if [[ $db == cairn ]]; then
				start_lite "$dir"
			fi
			bench load "$db" "$w" "$dist" "$dir"
			bench run "$db" "$w" "$dist" "$dir"
			stop_lite
			rm -rf "$dir"
		done
	done
done
"$BIN" bench report "${written[@]}" -o "$OUT/report.html"
echo "bench-lite: $OUT/report.html"
