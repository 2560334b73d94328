#!/usr/bin/env bash
# bench-replication.sh: YCSB workloads A and C (zipfian, 1 KB records) against
# `cairn lite` and against a 3-node RF=3 cluster (`cairn cluster start`, two
# shards), each with SYNC and with WRITE_NO_SYNC writes. Workload C reads with
# NONE_REQUIRED, so the cluster's followers serve reads. Every configuration
# gets a fresh store: load, then run A, then run C.
#
#   make bench-replication                 # about 8 minutes
#   DURATION=60 RECORDS=100000 make bench-replication
#
# Writes OUT/<target>-<sync>-{load,a,c}.{json,txt}, OUT/summary.tsv (target,
# sync, phase, throughput, p99 of the phase's main operation, the servers'
# CPU per operation: user+system time of every server process over the phase
# (/proc/PID/stat) / operations) and OUT/report.html, and prints the
# cluster / lite ratios of throughput and of server CPU per operation for
# each sync mode and phase (OUT/ratios.tsv).
#
# Environment (default): BIN (bin/cairn), OUT (results/replication),
# DURATION seconds per run (30), RECORDS (100000), THREADS (16),
# TARGETS (lite cluster), SYNCS (write_no_sync sync).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin/cairn}
OUT=${OUT:-results/replication}
DURATION=${DURATION:-30}
RECORDS=${RECORDS:-100000}
THREADS=${THREADS:-16}
TARGETS=${TARGETS:-lite cluster}
SYNCS=${SYNCS:-write_no_sync sync}
ROOT=$(mktemp -d /tmp/cairn-bench-repl.XXXXXX)
mkdir -p "$OUT"
LITE_PID=""
cleanup() {
	[[ -n $LITE_PID ]] && { kill -TERM "$LITE_PID" 2>/dev/null || true; wait "$LITE_PID" 2>/dev/null || true; }
	[[ -f $ROOT/cluster/cluster.json ]] && "$BIN" cluster stop --root "$ROOT/cluster" >/dev/null 2>&1 || true
	rm -rf "$ROOT"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

start_target() { # sets HOSTS
	local target=$1
	rm -rf "$ROOT/lite" "$ROOT/cluster"
	if [[ $target == lite ]]; then
		local port; port=$(free_port)
		"$BIN" lite --root "$ROOT/lite" --port "$port" >"$ROOT/lite.log" 2>&1 &
		LITE_PID=$!
		for _ in $(seq 200); do grep -q "ready at" "$ROOT/lite.log" && break; sleep 0.05; done
		HOSTS="127.0.0.1:$port"
		PIDS=$LITE_PID
	else
		"$BIN" cluster start --root "$ROOT/cluster" --nodes 3 --rf 3 --shards 2 --partitions 100 >"$ROOT/cluster.log" 2>&1
		HOSTS=$(python3 -c "import json;print(','.join(n['addr'] for n in json.load(open('$ROOT/cluster/cluster.json'))['nodes']))")
		PIDS=$(python3 -c "import json;print(' '.join(str(n['pid']) for n in json.load(open('$ROOT/cluster/cluster.json'))['nodes']))")
	fi
}

stop_target() {
	if [[ -n $LITE_PID ]]; then kill -TERM "$LITE_PID"; wait "$LITE_PID" || true; LITE_PID=""; fi
	if [[ -f $ROOT/cluster/cluster.json ]]; then "$BIN" cluster stop --root "$ROOT/cluster" >/dev/null; fi
}

# cpu_ticks: user+system clock ticks of the server processes (PIDS) so far.
cpu_ticks() {
	local t=0 p
	for p in $PIDS; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done
	echo "$t"
}
HZ=$(getconf CLK_TCK)

bench() { # phase workload hosts sync name [extra -p ...]
	local phase=$1 w=$2 hosts=$3 sync=$4 name=$5; shift 5
	local t0 t1
	t0=$(cpu_ticks)
	"$BIN" bench "$phase" -db cairn -P "workloads/workload$w" -threads "$THREADS" \
		-p cairn.hosts="$hosts" -p recordcount="$RECORDS" -p operationcount=100000000 \
		-p maxexecutiontime="$DURATION" -p requestdistribution=zipfian \
		-p cairn.durability="$sync" -p exportfile="$OUT/$name.json" "$@" >"$OUT/$name.txt"
	t1=$(cpu_ticks)
	local tput op p99 ops us
	tput=$(awk -F', ' '/\[OVERALL\], Throughput/{printf "%.0f", $3}' "$OUT/$name.txt")
	ops=$(awk -F', ' '/^\[(READ|UPDATE|INSERT)\], Operations/{n += $3} END {print n + 0}' "$OUT/$name.txt")
	us=$(awk -v d=$((t1 - t0)) -v hz="$HZ" -v n="$ops" 'BEGIN {printf "%.1f", n ? d / hz * 1e6 / n : 0}')
	op=$([[ $phase == load ]] && echo INSERT || { [[ $w == c ]] && echo READ || echo UPDATE; })
	p99=$(awk -F', ' -v op="[$op]" '$1==op && $2=="99thPercentileLatency(us)"{print $3}' "$OUT/$name.txt")
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "${name%%-*}" "$sync" "$phase-$w" "$tput" "$op" "$p99" "$us" | tee -a "$OUT/summary.tsv"
}

printf 'target\tsync\tphase\tops_per_sec\top\tp99_us\tserver_cpu_us_per_op\n' >"$OUT/summary.tsv"
for sync in $SYNCS; do
	for target in $TARGETS; do
		start_target "$target"
		# Load with full-length runs: maxexecutiontime must not cut the load short.
		DURATION=100000 bench load a "$HOSTS" "$sync" "$target-$sync-load"
		bench run a "$HOSTS" "$sync" "$target-$sync-a"
		bench run c "$HOSTS" "$sync" "$target-$sync-c" -p cairn.consistency=none_required
		stop_target
	done
done
# cluster / lite, per sync mode and phase: throughput and server CPU per op.
printf 'sync\tphase\tthroughput_cluster_over_lite\tserver_cpu_per_op_cluster_over_lite\n' >"$OUT/ratios.tsv"
awk -F'\t' 'NR > 1 {k = $2 "\t" $3; tp[$1, k] = $4; cpu[$1, k] = $7; keys[k] = 1}
	END {
		for (k in keys) if (tp["lite", k] > 0 && tp["cluster", k] > 0 && cpu["lite", k] > 0)
			printf "%s\t%.2f\t%.2f\n", k, tp["cluster", k] / tp["lite", k], cpu["cluster", k] / cpu["lite", k]
	}' "$OUT/summary.tsv" | sort >>"$OUT/ratios.tsv"
cat "$OUT/ratios.tsv"
"$BIN" bench report "$OUT"/*.json -o "$OUT/report.html" --title "Cairn: lite vs 3-node RF=3"
echo "report: $OUT/report.html"
