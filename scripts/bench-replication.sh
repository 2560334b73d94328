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
# sync, phase, throughput, p99 of the phase's main operation) and
# OUT/report.html.
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
	else
		"$BIN" cluster start --root "$ROOT/cluster" --nodes 3 --rf 3 --shards 2 --partitions 100 >"$ROOT/cluster.log" 2>&1
		HOSTS=$(python3 -c "import json;print(','.join(n['addr'] for n in json.load(open('$ROOT/cluster/cluster.json'))['nodes']))")
	fi
}

stop_target() {
	if [[ -n $LITE_PID ]]; then kill -TERM "$LITE_PID"; wait "$LITE_PID" || true; LITE_PID=""; fi
	if [[ -f $ROOT/cluster/cluster.json ]]; then "$BIN" cluster stop --root "$ROOT/cluster" >/dev/null; fi
}

bench() { # phase workload hosts sync name [extra -p ...]
	local phase=$1 w=$2 hosts=$3 sync=$4 name=$5; shift 5
	"$BIN" bench "$phase" -db cairn -P "workloads/workload$w" -threads "$THREADS" \
		-p cairn.hosts="$hosts" -p recordcount="$RECORDS" -p operationcount=100000000 \
		-p maxexecutiontime="$DURATION" -p requestdistribution=zipfian \
		-p cairn.durability="$sync" -p exportfile="$OUT/$name.json" "$@" >"$OUT/$name.txt"
	local tput op p99
	tput=$(awk -F', ' '/\[OVERALL\], Throughput/{printf "%.0f", $3}' "$OUT/$name.txt")
	op=$([[ $phase == load ]] && echo INSERT || { [[ $w == c ]] && echo READ || echo UPDATE; })
	p99=$(awk -F', ' -v op="[$op]" '$1==op && $2=="99thPercentileLatency(us)"{print $3}' "$OUT/$name.txt")
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "${name%%-*}" "$sync" "$phase-$w" "$tput" "$op" "$p99" | tee -a "$OUT/summary.tsv"
}

printf 'target\tsync\tphase\tops_per_sec\top\tp99_us\n' >>"$OUT/summary.tsv"
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
"$BIN" bench report "$OUT"/*.json -o "$OUT/report.html" --title "Cairn: lite vs 3-node RF=3"
echo "report: $OUT/report.html"
