#!/usr/bin/env bash
# cluster-ab.sh: two cairn binaries side by side on a 3-node RF 3 cluster
# (`cairn cluster start --nodes 3 --rf 3 --shards 2`), alternating: each run
# is a fresh cluster, a `cairn bench load` of RECORDS records (1 KB values,
# 16 threads), then WORKLOAD for DURATION seconds (zipfian). Each side's own
# binary runs its nodes and its client, so a change to either end counts.
#
#   go build -o /tmp/cairn-before ./cmd/cairn   # at the commit before
#   make build                                  # the change, as bin/cairn
#   BEFORE=/tmp/cairn-before AFTER=bin/cairn scripts/cluster-ab.sh
#   REPS=3 WORKLOAD=c CONSISTENCY=none_required BEFORE=... AFTER=... scripts/cluster-ab.sh
#   DURABILITY=sync BEFORE=... AFTER=... scripts/cluster-ab.sh   # every write fsyncs on the leader
#   AFTER_FLAGS=--sn-flag=--raft-log-keep=512 BEFORE=bin/cairn AFTER=bin/cairn scripts/cluster-ab.sh
#
# It prints, and writes to OUT/summary.tsv, one line per run: throughput,
# the nodes' CPU per operation (user+system time of the three node
# processes over the phase, /proc/PID/stat, over the phase's operations)
# and the client's (/usr/bin/time), for the load and for the workload; then
# the after / before ratios of the means. Nothing is pinned: four processes
# share the machine's cores, as `make bench-replication` runs them.
#
# Environment (default): BEFORE, AFTER (required), REPS (3), RECORDS
# (50000), WORKLOAD (a), DURATION (20), THREADS (16), CONSISTENCY (the
# bench's default, none_required), DURABILITY (the bench's default,
# write_no_sync; or sync, no_sync), AFTER_FLAGS (extra `cluster start`
# flags for the after side only), OUT (results/cluster-ab), TMPDIR (/tmp:
# where the clusters live; TMPDIR=/dev/shm keeps the disk out of the
# comparison).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${BEFORE:?set BEFORE to the binary before the change}" "${AFTER:?set AFTER to the binary after it}"
REPS=${REPS:-3} RECORDS=${RECORDS:-50000} WORKLOAD=${WORKLOAD:-a} DURATION=${DURATION:-20}
THREADS=${THREADS:-16} CONSISTENCY=${CONSISTENCY:-none_required} DURABILITY=${DURABILITY:-write_no_sync}
AFTER_FLAGS=${AFTER_FLAGS:-}
OUT=${OUT:-results/cluster-ab}
command -v python3 >/dev/null || { echo "cluster-ab: python3 is needed to read cluster.json" >&2; exit 1; }
hz=$(getconf CLK_TCK)
ROOT=$(mktemp -d "${TMPDIR:-/tmp}/cairn-cluster-ab.XXXXXX")
BIN=""
cleanup() {
	if [[ -n $BIN && -f $ROOT/cluster/cluster.json ]]; then "$BIN" cluster stop --root "$ROOT/cluster" >/dev/null 2>&1 || true; fi
	rm -rf "$ROOT"
}
trap cleanup EXIT
rm -rf "$OUT" && mkdir -p "$OUT"
printf 'rep\tside\tload_ops_per_s\tload_server_us\tload_client_us\trun_ops_per_s\trun_server_us\trun_client_us\tload_avg\n' >"$OUT/summary.tsv"

node_ticks() { # user+system ticks of the node processes so far
	local t=0 p
	for p in $PIDS; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done
	echo "$t"
}

# phase_line FILE TICKS TIMEFILE: ops/s, server µs/op, client µs/op of a phase.
phase_line() {
	awk -v ticks="$2" -v hz="$hz" -v client="$(awk '{print $1 + $2}' "$3")" -F', ' '
		/^\[(READ|UPDATE|INSERT)\], Operations/ {ops += $3} /^\[OVERALL\], Throughput/ {tput = $3}
		END {if (!ops) {print "cluster-ab: a phase did no operation" > "/dev/stderr"; exit 1}
			printf "%.0f\t%.1f\t%.1f", tput, ticks / hz * 1e6 / ops, client * 1e6 / ops}' "$1"
}

run_one() { # side binary rep
	local side=$1 rep=$2 f="$OUT/$1-$2" flags=() t0 t1 t2 load run
	BIN=$3
	[[ $side == after && -n $AFTER_FLAGS ]] && read -ra flags <<<"$AFTER_FLAGS"
	rm -rf "$ROOT/cluster"
	"$BIN" cluster start --root "$ROOT/cluster" --nodes 3 --rf 3 --shards 2 --partitions 100 "${flags[@]}" >"$f.cluster" 2>&1 ||
		{ cat "$f.cluster" >&2; echo "cluster-ab: the cluster did not start" >&2; exit 1; }
	local hosts
	hosts=$(python3 -c "import json;print(','.join(n['addr'] for n in json.load(open('$ROOT/cluster/cluster.json'))['nodes']))")
	PIDS=$(python3 -c "import json;print(' '.join(str(n['pid']) for n in json.load(open('$ROOT/cluster/cluster.json'))['nodes']))")
	local common=(-db cairn -threads "$THREADS" -p "cairn.hosts=$hosts" -p "recordcount=$RECORDS"
		-p "cairn.consistency=$CONSISTENCY" -p "cairn.durability=$DURABILITY")
	t0=$(node_ticks)
	/usr/bin/time -f '%U %S' -o "$f.load.time" "$BIN" bench load -P workloads/workloada "${common[@]}" >"$f.load" 2>&1
	t1=$(node_ticks)
	/usr/bin/time -f '%U %S' -o "$f.run.time" "$BIN" bench run -P "workloads/workload$WORKLOAD" "${common[@]}" \
		-p operationcount=1000000000 -p "maxexecutiontime=$DURATION" -p requestdistribution=zipfian >"$f.run" 2>&1
	t2=$(node_ticks)
	"$BIN" cluster stop --root "$ROOT/cluster" >/dev/null
	load=$(phase_line "$f.load" $((t1 - t0)) "$f.load.time")
	run=$(phase_line "$f.run" $((t2 - t1)) "$f.run.time")
	printf '%s\t%s\t%s\t%s\t%s\n' "$rep" "$side" "$load" "$run" "$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$OUT/summary.tsv"
}

for rep in $(seq "$REPS"); do
	if ((rep % 2)); then run_one before "$rep" "$BEFORE"; run_one after "$rep" "$AFTER"
	else run_one after "$rep" "$AFTER"; run_one before "$rep" "$BEFORE"; fi
done
awk -F'\t' -v w="$WORKLOAD" 'NR > 1 {for (i = 3; i <= 8; i++) s[$2, i] += $i; n[$2]++}
	END {split("load ops/s,load server us/op,load client us/op," w " ops/s," w " server us/op," w " client us/op", name, ",")
		for (i = 3; i <= 8; i++) printf "%s: before %.1f, after %.1f, after / before x%.3f\n", name[i - 2],
			s["before", i] / n["before"], s["after", i] / n["after"], (s["after", i] / n["after"]) / (s["before", i] / n["before"])}' "$OUT/summary.tsv"
