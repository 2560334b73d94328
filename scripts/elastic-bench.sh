#!/usr/bin/env bash
# elastic-bench.sh: issue 10's acceptances 1 and 2 as an operator runs them.
#
#   1. The white paper's store (examples/whitepaper/deploy.kvs: 3 storage
#      nodes of capacity 2, RF 3, 100 partitions in 2 shards) is loaded with
#      RECORDS records, and `cairn bench run` workload A with
#      dataintegrity=true runs for the whole test. Three more nodes are
#      started and deployed, joined to the pool, and the Oracle sequence
#      (topology clone -current, redistribute, preview, plan deploy-topology)
#      grows the store to 4 shards of 25 partitions.
#   2. topology contract shrinks it back to the first three nodes, and
#      plan remove-sn removes the others (skipped with SHRINK=0).
#
# Then every record is read back with ABSOLUTE consistency (a sequential
# read of all of them, dataintegrity=true). The script prints, per phase,
# how long it took and the workload's throughput during it as a fraction of
# the STEADY seconds before it, and exits non-zero if the bench or the
# read-back saw an error or an integrity failure, or verify configuration
# reports a violation.
#
#   make elastic-bench                        # about 6 minutes
#   RECORDS=20000 STEADY=10 make elastic-bench
#
# Environment (default): BIN (bin/cairn), OUT (results/elastic), RECORDS
# (100000), THREADS (8), STEADY seconds of steady load before and after each
# phase (30), SHRINK (1), MOVE_ARGS extra flags of plan deploy-topology
# (e.g. "-move-share 100").
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin/cairn}
OUT=${OUT:-results/elastic}
RECORDS=${RECORDS:-100000}
THREADS=${THREADS:-8}
STEADY=${STEADY:-30}
SHRINK=${SHRINK:-1}
MOVE_ARGS=${MOVE_ARGS:-}
ROOT=$(mktemp -d /tmp/cairn-elastic.XXXXXX)
mkdir -p "$OUT"
rm -f "$OUT"/*.txt "$OUT"/*.log "$OUT"/phases.tsv

pids=()
BENCH_PID=""
cleanup() {
	[[ -n $BENCH_PID ]] && kill -TERM "$BENCH_PID" 2>/dev/null || true
	for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
	for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
	rm -rf "$ROOT"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
now_ms() { date +%s%3N; }
say() { echo "== $*"; }

ports=()
for i in 1 2 3 4 5 6; do
	ports+=("$(free_port)")
	"$BIN" sn init --root "$ROOT/sn$i" --host 127.0.0.1 --port "${ports[i - 1]}" --capacity 2 >/dev/null
done
start_node() { # i
	local i=$1
	"$BIN" sn start --root "$ROOT/sn$i" >"$OUT/sn$i.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 300); do grep -q "ready" "$OUT/sn$i.log" && return 0; sleep 0.1; done
	echo "elastic-bench: sn$i did not start:" >&2
	cat "$OUT/sn$i.log" >&2
	exit 1
}
admin() { "$BIN" admin -host 127.0.0.1 -port "${ports[0]}" "$@"; }

for i in 1 2 3; do start_node "$i"; done
sed -e "s/-port 5000\b/-port ${ports[0]}/" -e "s/-port 6000\b/-port ${ports[1]}/" -e "s/-port 7000\b/-port ${ports[2]}/" \
	examples/whitepaper/deploy.kvs >"$ROOT/deploy.kvs"
say "deploying the white paper's store (examples/whitepaper/deploy.kvs)"
admin -script "$ROOT/deploy.kvs" >"$OUT/deploy.txt"

hosts="127.0.0.1:${ports[0]},127.0.0.1:${ports[1]},127.0.0.1:${ports[2]}"
bench_args=(-P workloads/workloada -p "cairn.hosts=$hosts" -p dataintegrity=true -p "recordcount=$RECORDS" -threads "$THREADS")
say "loading $RECORDS records"
"$BIN" bench load "${bench_args[@]}" >"$OUT/load.txt"
say "workload A with dataintegrity=true, for the whole test (status every second: $OUT/status.log)"
"$BIN" bench run "${bench_args[@]}" -p operationcount=0 -s -p status.interval=1 >"$OUT/run.txt" 2>"$OUT/status.log" &
BENCH_PID=$!
sleep "$STEADY"

phase() { # name script-lines...
	local name=$1
	shift
	printf '%s\n' "$@" >"$ROOT/$name.kvs"
	local start end
	start=$(now_ms)
	if ! admin -script "$ROOT/$name.kvs" >"$OUT/$name.txt" 2>&1; then
		echo "elastic-bench: $name failed:" >&2
		cat "$OUT/$name.txt" >&2
		exit 1
	fi
	end=$(now_ms)
	printf '%s\t%s\t%s\n' "$name" "$start" "$end" >>"$OUT/phases.tsv"
	say "$name: $(((end - start) / 1000)) s"
	admin verify configuration >"$OUT/$name-verify.txt" || true
	if ! grep -q " 0 violations" "$OUT/$name-verify.txt"; then
		echo "elastic-bench: verify configuration after $name:" >&2
		cat "$OUT/$name-verify.txt" >&2
		exit 1
	fi
	sleep "$STEADY"
}

for i in 4 5 6; do start_node "$i"; done
add=()
for i in 4 5 6; do add+=("plan deploy-sn -znname MyZone -host 127.0.0.1 -port ${ports[i - 1]} -wait"); done
add+=("pool join -name MyPool -sn sn4" "pool join -name MyPool -sn sn5" "pool join -name MyPool -sn sn6"
	"topology clone -current -name Grown" "topology redistribute -name Grown -pool MyPool" "topology preview -name Grown")
phase add-nodes "${add[@]}"
phase grow "plan deploy-topology -name Grown $MOVE_ARGS -wait"
admin show topology >"$OUT/grown-topology.txt"
if [[ $(grep -c "num partitions=25" "$OUT/grown-topology.txt") != 4 ]]; then
	echo "elastic-bench: the grown store does not have 4 shards of 25 partitions:" >&2
	cat "$OUT/grown-topology.txt" >&2
	exit 1
fi

if [[ $SHRINK == 1 ]]; then
	admin -script <(printf '%s\n' "pool create -name Small" "pool join -name Small -sn sn1" "pool join -name Small -sn sn2" \
		"pool join -name Small -sn sn3" "topology clone -current -name Shrunk" "topology contract -name Shrunk -pool Small" \
		"topology preview -name Shrunk") >"$OUT/contract.txt"
	phase shrink "plan deploy-topology -name Shrunk $MOVE_ARGS -wait"
	phase remove-nodes "plan remove-sn -sn sn4 -wait" "plan remove-sn -sn sn5 -wait" "plan remove-sn -sn sn6 -wait"
fi

kill -INT "$BENCH_PID"
bench_rc=0
wait "$BENCH_PID" || bench_rc=$?
BENCH_PID=""
say "the workload's summary: $OUT/run.txt (exit $bench_rc)"
grep -E "^\[(OVERALL|UPDATE|READ|UPDATE-FAILED|READ-FAILED|VERIFY)\], (Throughput|Operations|Return=)" "$OUT/run.txt" || true

say "reading back all $RECORDS records with ABSOLUTE consistency"
readback_rc=0
"$BIN" bench run -P workloads/workloadc -p "cairn.hosts=$hosts" -p dataintegrity=true -p "recordcount=$RECORDS" \
	-p "operationcount=$RECORDS" -p requestdistribution=sequential -p cairn.consistency=absolute -threads "$THREADS" \
	>"$OUT/readback.txt" 2>/dev/null || readback_rc=$?
grep -E "^\[(READ|READ-FAILED|VERIFY)\], (Operations|Return=)" "$OUT/readback.txt" || true

python3 - "$OUT" "$STEADY" <<'EOF'
import re, sys, datetime
out, steady = sys.argv[1], float(sys.argv[2])
pts = []  # (epoch seconds, cumulative operations)
for line in open(f"{out}/status.log"):
    m = re.match(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d):(\d{3}) \d+ sec: (\d+) operations", line)
    if m:
        t = datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S").timestamp() + int(m.group(2)) / 1000
        pts.append((t, int(m.group(3))))
def ops_at(t):
    for (t0, o0), (t1, o1) in zip(pts, pts[1:]):
        if t0 <= t <= t1:
            return o0 + (o1 - o0) * (t - t0) / max(t1 - t0, 1e-9)
    return None
def rate(a, b):
    oa, ob = ops_at(a), ops_at(b)
    return None if oa is None or ob is None else (ob - oa) / (b - a)
print("phase\tseconds\tsteady_ops_s\tduring_ops_s\tfraction")
for line in open(f"{out}/phases.tsv"):
    name, start, end = line.split()
    a, b = int(start) / 1000, int(end) / 1000
    s, d = rate(a - steady, a), rate(a, b)
    if s and d is not None:
        print(f"{name}\t{b - a:.1f}\t{s:.0f}\t{d:.0f}\t{d / s:.2f}")
EOF
for p in grow shrink; do
	[[ -f $OUT/$p.txt ]] && say "$p: $(grep -h "^Moves:" "$OUT/$p.txt" | tail -1)"
done
fail=0
grep -qE "^\[VERIFY\], Return=(UNEXPECTED_STATE|ERROR)" "$OUT/run.txt" "$OUT/readback.txt" && fail=1
grep -qE "^\[(UPDATE|READ)-FAILED\]" "$OUT/run.txt" "$OUT/readback.txt" && fail=1
if ((bench_rc != 0 || readback_rc != 0 || fail)); then
	echo "elastic-bench: FAILED (bench exit $bench_rc, read-back exit $readback_rc, failures or integrity errors: $fail)" >&2
	exit 1
fi
say "no operation failed, no integrity failure, every record read back"
