#!/usr/bin/env bash
# batching.sh: how well a store batches its writes, from its nodes' own
# counters (GET /metrics on the debug listener, --pprof; docs/operations.md,
# "Metrics"). A fresh store (TARGET=cluster: `cairn cluster start --nodes 3
# --rf 3 --shards 2`; TARGET=lite: `cairn lite`), `cairn bench load` of
# RECORDS records (10 x 100 B), then workload WORKLOAD for DURATION seconds
# with THREADS threads (zipfian). Every node's metrics are read just before
# and just after the run phase; the script prints, per node and in all,
# what each write (insert or update) of the phase cost in:
#
#   readies   Raft Readies handled (cluster)
#   entries   Raft log entries written, and entries per Ready (cluster)
#   commits   engine batch commits (each a WAL write)
#   keys      keys in those commits (each a memtable insert)
#   fsyncs    WAL fsyncs that reached the disk
#   msgs      Raft messages sent (cluster)
#
#   scripts/batching.sh                                  # cluster, workload A
#   TARGET=lite DURABILITY=sync scripts/batching.sh      # lite's group commit
#
# Environment (default): BIN (bin/cairn), TARGET (cluster), WORKLOAD (a),
# DURATION (20), RECORDS (50000), THREADS (16), DURABILITY (write_no_sync;
# or sync, no_sync), OUT (results/batching).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin/cairn} TARGET=${TARGET:-cluster} WORKLOAD=${WORKLOAD:-a} DURATION=${DURATION:-20}
RECORDS=${RECORDS:-50000} THREADS=${THREADS:-16} DURABILITY=${DURABILITY:-write_no_sync}
OUT=${OUT:-results/batching}
case $TARGET in lite | cluster) ;; *) echo "batching.sh: TARGET=$TARGET: want lite or cluster" >&2; exit 2 ;; esac
[ -x "$BIN" ] || { echo "batching.sh: no $BIN: run make build first" >&2; exit 2; }
[ -f "workloads/workload$WORKLOAD" ] || { echo "batching.sh: WORKLOAD=$WORKLOAD: no workloads/workload$WORKLOAD (a to f)" >&2; exit 2; }
command -v curl >/dev/null || { echo "batching.sh: curl is needed to read /metrics" >&2; exit 2; }
root=$(mktemp -d "${TMPDIR:-/tmp}/cairn-batching.XXXXXX")
lite_pid=""
cleanup() {
	if [ -n "$lite_pid" ]; then kill -TERM "$lite_pid" 2>/dev/null || true; wait "$lite_pid" 2>/dev/null || true; fi
	if [ -f "$root/s/cluster.json" ]; then "$BIN" cluster stop --root "$root/s" >/dev/null 2>&1 || true; fi
	rm -rf "$root"
}
trap cleanup EXIT
rm -rf "$OUT" && mkdir -p "$OUT"

# wait_for FILE PATTERN: until FILE holds a line matching PATTERN (30 s).
wait_for() {
	local i
	for i in $(seq 300); do
		if grep -q "$2" "$1" 2>/dev/null; then return 0; fi
		sleep 0.1
	done
	echo "batching.sh: no '$2' in $1 after 30 s" >&2
	cat "$1" >&2
	exit 1
}

urls=() hosts=""
if [ "$TARGET" = lite ]; then
	"$BIN" lite --root "$root/s" --port 0 --pprof 127.0.0.1:0 >"$root/lite.log" 2>&1 &
	lite_pid=$!
	wait_for "$root/lite.log" 'metrics=http'
	hosts=$(grep -o 'ready at [^ ]*' "$root/lite.log" | cut -d' ' -f3)
	urls=("$(grep -o 'metrics=http://[^ "]*' "$root/lite.log" | cut -d= -f2)")
else
	"$BIN" cluster start --root "$root/s" --nodes 3 --rf 3 --shards 2 --partitions 100 --sn-flag=--pprof=127.0.0.1:0 >"$OUT/cluster.txt" 2>&1 ||
		{ cat "$OUT/cluster.txt" >&2; echo "batching.sh: the cluster did not start" >&2; exit 1; }
	hosts=$(grep -o '"addr": *"[^"]*"' "$root/s/cluster.json" | cut -d'"' -f4 | paste -sd,)
	for n in "$root"/s/n*/; do
		wait_for "$n/sn.log" 'metrics=http'
		urls+=("$(grep -o 'metrics=http://[^ "]*' "$n/sn.log" | tail -1 | cut -d= -f2)")
	done
fi

# totals URL: the node's counters, summed over shards, as "name value" lines.
totals() {
	curl -sf "$1" | awk '
		/^cairn_raft_readies_total/ {r += $NF} /^cairn_raft_entries_appended_total/ {e += $NF}
		/^cairn_raft_messages_sent_total/ {m += $NF} /^cairn_storage_commits_total / {c = $NF}
		/^cairn_storage_commit_keys_total / {k = $NF} /^cairn_storage_wal_fsyncs_total / {f = $NF}
		END {printf "%d %d %d %d %d %d\n", r, e, c, k, f, m}'
}

# bench FILE ARGS...: one `cairn bench` phase, its output in FILE, shown if it fails.
bench() {
	local f=$1
	shift
	"$BIN" bench "$@" >"$f" 2>&1 || { cat "$f" >&2; echo "batching.sh: cairn bench $1 failed (its output is above)" >&2; exit 1; }
}

common=(-db cairn -threads "$THREADS" -p "cairn.hosts=$hosts" -p "recordcount=$RECORDS" -p "cairn.durability=$DURABILITY")
echo "== $TARGET: load of $RECORDS records, then workload $WORKLOAD for ${DURATION}s, $THREADS threads, $DURABILITY"
bench "$OUT/load.txt" load -P workloads/workloada "${common[@]}"
before=()
for u in "${urls[@]}"; do before+=("$(totals "$u")"); done
bench "$OUT/run.txt" run -P "workloads/workload$WORKLOAD" "${common[@]}" -p operationcount=1000000000 \
	-p "maxexecutiontime=$DURATION" -p requestdistribution=zipfian
after=()
for u in "${urls[@]}"; do after+=("$(totals "$u")"); done
writes=$(awk -F', ' '/^\[(INSERT|UPDATE|READ-MODIFY-WRITE)\], Operations/ {w += $3} END {print w + 0}' "$OUT/run.txt")
ops=$(awk -F', ' '/^\[(READ|INSERT|UPDATE|SCAN)\], Operations/ {o += $3} END {print o + 0}' "$OUT/run.txt")
tput=$(awk -F', ' '/^\[OVERALL\], Throughput/ {printf "%.0f", $3}' "$OUT/run.txt")
[ "$writes" -gt 0 ] || { echo "batching.sh: the run phase made no write (workload $WORKLOAD?)" >&2; exit 1; }
echo "run phase: $tput ops/s, $ops operations, $writes writes"
{
	printf 'node\treadies\tentries\tentries_per_ready\tcommits\tkeys\tfsyncs\tmsgs\t(per write)\n'
	for i in "${!urls[@]}"; do
		printf '%s %s %s\n' "$((i + 1))" "${before[$i]}" "${after[$i]}"
	done | awk -v w="$writes" '
		{ r = $8 - $2; e = $9 - $3; c = $10 - $4; k = $11 - $5; f = $12 - $6; m = $13 - $7
		  R += r; E += e; C += c; K += k; F += f; M += m
		  printf "%s\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.3f\t%.2f\n", $1, r / w, e / w, (r ? e / r : 0), c / w, k / w, f / w, m / w }
		END { printf "all\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.3f\t%.2f\n", R / w, E / w, (R ? E / R : 0), C / w, K / w, F / w, M / w }'
} | tee "$OUT/batching.tsv" | column -t -s $'\t'
