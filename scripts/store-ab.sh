#!/usr/bin/env bash
# store-ab.sh: two variants of a store or of the client's properties, side
# by side, alternating, under one `cairn bench` binary: throughput, the
# servers' CPU per operation (user+system time of every server process over
# the run phase / operations) and the client's (the bench process's).
#
#   # workload A's update as one server-side merge, or as get + put-if-version:
#   BEFORE_PROPS="-p cairn.update=rmw" AFTER_PROPS="" scripts/store-ab.sh
#   TARGET=cluster BEFORE_PROPS="-p cairn.update=rmw" AFTER_PROPS="" scripts/store-ab.sh
#   # a 3-node cluster whose nodes take every core, or their share (the default):
#   TARGET=cluster WORKLOAD=c BEFORE_ENV="GOMAXPROCS=2" AFTER_ENV="" scripts/store-ab.sh
#   # two builds (say, two commits), each serving and benchmarking its side:
#   BEFORE_BIN=/tmp/cairn-old AFTER_BIN=bin/cairn scripts/store-ab.sh
#
# Each run: a fresh store (TARGET=lite: `cairn lite`; TARGET=cluster: `cairn
# cluster start`, 3 nodes, RF 3, 2 shards), started with the side's
# environment (BEFORE_ENV / AFTER_ENV: VAR=value words), `cairn bench load`
# of RECORDS records of 10 x 100 B, then `cairn bench run` of WORKLOAD for
# DURATION seconds with THREADS threads and the side's properties
# (BEFORE_PROPS / AFTER_PROPS, added to both phases). The order alternates
# (before, after; after, before; ...). Nothing is pinned: the servers and
# the client share the machine, as in make bench-replication.
#
# Environment (default): REPS (2), TARGET (lite), WORKLOAD (a), DURATION
# (15), RECORDS (50000), THREADS (16), BIN (bin/cairn), BEFORE_BIN and
# AFTER_BIN (BIN), BASE_PORT (5700), OUT (results/store-ab).
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${REPS:-2} TARGET=${TARGET:-lite} WORKLOAD=${WORKLOAD:-a} DURATION=${DURATION:-15}
RECORDS=${RECORDS:-50000} THREADS=${THREADS:-16} BIN=${BIN:-bin/cairn} BASE_PORT=${BASE_PORT:-5700}
OUT=${OUT:-results/store-ab}
BEFORE_PROPS=${BEFORE_PROPS:-} AFTER_PROPS=${AFTER_PROPS:-} BEFORE_ENV=${BEFORE_ENV:-} AFTER_ENV=${AFTER_ENV:-}
BEFORE_BIN=${BEFORE_BIN:-$BIN} AFTER_BIN=${AFTER_BIN:-$BIN}
case $TARGET in lite | cluster) ;; *) echo "store-ab.sh: TARGET=$TARGET: want lite or cluster" >&2; exit 2 ;; esac
for b in "$BEFORE_BIN" "$AFTER_BIN"; do
	[ -x "$b" ] || { echo "store-ab.sh: no $b: run make build first" >&2; exit 2; }
done
BIN=$BEFORE_BIN # stop's, until a side sets it
hz=$(getconf CLK_TCK)
root=$(mktemp -d -t cairn-store-ab.XXXXXX)
pids="" lite_pid=""
stop() {
	if [ -n "$lite_pid" ]; then kill -TERM "$lite_pid" 2>/dev/null || true; wait "$lite_pid" 2>/dev/null || true; fi
	if [ -f "$root/s/cluster.json" ]; then "$BIN" cluster stop --root "$root/s" >/dev/null 2>&1 || true; fi
	lite_pid="" pids=""
	rm -rf "$root/s"
}
trap 'stop; rm -rf "$root"' EXIT
rm -rf "$OUT" && mkdir -p "$OUT"
printf 'rep\tside\tops_per_s\tserver_us_per_op\tclient_us_per_op\tload\n' >"$OUT/summary.tsv"

start() { # env words; sets hosts and pids
	local envs=$1
	if [ "$TARGET" = lite ]; then
		# shellcheck disable=SC2086
		env $envs "$BIN" lite --root "$root/s" --port "$BASE_PORT" >"$root/lite.log" 2>&1 &
		lite_pid=$!
		for _ in $(seq 200); do grep -q 'ready at' "$root/lite.log" && break; sleep 0.05; done
		hosts="127.0.0.1:$BASE_PORT" pids=$lite_pid
	else
		# shellcheck disable=SC2086
		env $envs "$BIN" cluster start --root "$root/s" --nodes 3 --rf 3 --shards 2 --base-port "$BASE_PORT" >/dev/null
		hosts=$(python3 -c "import json;print(','.join(n['addr'] for n in json.load(open('$root/s/cluster.json'))['nodes']))")
		pids=$(python3 -c "import json;print(' '.join(str(n['pid']) for n in json.load(open('$root/s/cluster.json'))['nodes']))")
	fi
}

ticks() { # user+system ticks of the given pids
	local t=0 p
	for p in "$@"; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done
	echo "$t"
}

run_one() { # side env props rep bin
	local side=$1 envs=$2 props=$3 rep=$4 f s0 s1 c tput ops
	BIN=$5
	f="$OUT/$side-$rep"
	start "$envs"
	# shellcheck disable=SC2086
	"$BIN" bench load -db cairn -P "workloads/workload$WORKLOAD" -p cairn.hosts="$hosts" \
		-p recordcount="$RECORDS" -threads "$THREADS" $props >"$f.load" 2>&1
	# shellcheck disable=SC2086
	s0=$(ticks $pids)
	# shellcheck disable=SC2086
	/usr/bin/time -f '%U %S' -o "$f.time" "$BIN" bench run -db cairn -P "workloads/workload$WORKLOAD" \
		-p cairn.hosts="$hosts" -p recordcount="$RECORDS" -p operationcount=1000000000 \
		-p maxexecutiontime="$DURATION" -p requestdistribution=zipfian -threads "$THREADS" $props >"$f.run" 2>&1
	# shellcheck disable=SC2086
	s1=$(ticks $pids)
	stop
	tput=$(awk -F', ' '/\[OVERALL\], Throughput/{printf "%.0f", $3}' "$f.run")
	ops=$(awk -F', ' '/^\[(READ|UPDATE|INSERT|SCAN|READ-MODIFY-WRITE)\], Operations/{n += $3} END {print n + 0}' "$f.run")
	c=$(awk '{print $1 + $2}' "$f.time")
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$rep" "$side" "$tput" \
		"$(awk -v d=$((s1 - s0)) -v hz="$hz" -v n="$ops" 'BEGIN {printf "%.1f", d / hz * 1e6 / n}')" \
		"$(awk -v c="$c" -v n="$ops" 'BEGIN {printf "%.1f", c * 1e6 / n}')" \
		"$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$OUT/summary.tsv"
}

echo "== $TARGET, workload $WORKLOAD, $RECORDS records, $THREADS threads, ${DURATION}s runs, $REPS pairs"
echo "== before: $BEFORE_BIN env [$BEFORE_ENV] props [$BEFORE_PROPS]; after: $AFTER_BIN env [$AFTER_ENV] props [$AFTER_PROPS]"
for rep in $(seq "$REPS"); do
	if [ $((rep % 2)) = 1 ]; then
		run_one before "$BEFORE_ENV" "$BEFORE_PROPS" "$rep" "$BEFORE_BIN"
		run_one after "$AFTER_ENV" "$AFTER_PROPS" "$rep" "$AFTER_BIN"
	else
		run_one after "$AFTER_ENV" "$AFTER_PROPS" "$rep" "$AFTER_BIN"
		run_one before "$BEFORE_ENV" "$BEFORE_PROPS" "$rep" "$BEFORE_BIN"
	fi
done
awk -F'\t' 'NR > 1 {n[$2]++; t[$2] += $3; s[$2] += $4; c[$2] += $5}
	END {
		for (k in n) printf "mean %s: %.0f ops/s, server %.1f us/op, client %.1f us/op\n", k, t[k] / n[k], s[k] / n[k], c[k] / n[k]
		if (n["before"] && n["after"])
			printf "after / before: throughput x%.3f, server CPU/op x%.3f, client CPU/op x%.3f\n", (t["after"] / n["after"]) / (t["before"] / n["before"]), (s["after"] / n["after"]) / (s["before"] / n["before"]), (c["after"] / n["after"]) / (c["before"] / n["before"])
	}' "$OUT/summary.tsv"
