#!/usr/bin/env bash
# The Oracle NoSQL Database YCSB white paper procedure, on one machine:
# three storage nodes (capacity 2 each), deployed with deploy.kvs into a
# store of 2 shards x 3 replicas over 100 partitions, then YCSB workload A
# (load, then run) with data integrity checks. The nodes are stopped at exit.
#
# Usage: examples/whitepaper/run.sh [BASEDIR [PORT1,PORT2,PORT3]]
#   BASEDIR  where the nodes keep their roots (BASEDIR/sn1 ...) and logs;
#            must not hold a store already (default: a new temporary directory)
#   PORTS    the three nodes' ports (default 5000,6000,7000)
#
# Environment:
#   CAIRN      the cairn binary (default: cairn on PATH, else ./cairn, else
#              bin/cairn or cairn at the repository root)
#   RECORDS    recordcount (default 10000)
#   OPS        operationcount of the run phase (default 50000)
#   THREADS    client threads (default 8)
#   READY_TIMEOUT  seconds to wait for each node to be ready (default 30)
#
# Example: CAIRN=bin/cairn examples/whitepaper/run.sh /tmp/wp 5000,6000,7000
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)

if [[ -z "${CAIRN:-}" ]]; then
	if command -v cairn >/dev/null 2>&1; then
		CAIRN=cairn
	elif [[ -x ./cairn ]]; then
		CAIRN=./cairn
	elif [[ -x "$repo/bin/cairn" ]]; then
		CAIRN=$repo/bin/cairn
	elif [[ -x "$repo/cairn" ]]; then
		CAIRN=$repo/cairn
	else
		echo "run.sh: no cairn binary: set CAIRN, or build one (make build)" >&2
		exit 2
	fi
fi

base=${1:-}
if [[ -z "$base" ]]; then
	base=$(mktemp -d "${TMPDIR:-/tmp}/cairn-whitepaper.XXXXXX")
fi
ports_arg=${2:-5000,6000,7000}
IFS=, read -r -a ports <<<"$ports_arg"
if [[ ${#ports[@]} -ne 3 ]]; then
	echo "run.sh: want three ports, comma-separated (got '$ports_arg')" >&2
	exit 2
fi
records=${RECORDS:-10000}
ops=${OPS:-50000}
threads=${THREADS:-8}
ready_timeout=${READY_TIMEOUT:-30}
host=127.0.0.1

mkdir -p "$base"
for i in 1 2 3; do
	if [[ -e "$base/sn$i/config.json" ]]; then
		echo "run.sh: $base/sn$i already holds a storage node; use an empty BASEDIR" >&2
		exit 2
	fi
done

pids=()
stop_nodes() {
	local pid
	for pid in "${pids[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
	done
	for pid in "${pids[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	if [[ ${#pids[@]} -gt 0 ]]; then
		echo "== stopped the storage nodes; their roots and logs are in $base"
	fi
}
trap stop_nodes EXIT

# wait_ready LOG PID: wait until the node logs its ready line, fail if it
# exits first or takes longer than READY_TIMEOUT seconds.
wait_ready() {
	local log=$1 pid=$2 deadline=$((SECONDS + ready_timeout))
	until grep -q "ready" "$log" 2>/dev/null; do
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "run.sh: the node logging to $log exited:" >&2
			cat "$log" >&2
			exit 1
		fi
		if ((SECONDS >= deadline)); then
			echo "run.sh: $log shows no ready line after ${ready_timeout}s:" >&2
			cat "$log" >&2
			exit 1
		fi
		sleep 0.1
	done
	cat "$log"
}

echo "== cairn: $CAIRN; nodes under $base on ports ${ports[*]}"
for i in 1 2 3; do
	"$CAIRN" sn init --root "$base/sn$i" --host "$host" --port "${ports[i - 1]}" --capacity 2
done
for i in 1 2 3; do
	"$CAIRN" sn start --root "$base/sn$i" >"$base/sn$i.log" 2>&1 &
	pids+=($!)
done
for i in 1 2 3; do
	wait_ready "$base/sn$i.log" "${pids[i - 1]}"
done

# deploy.kvs names ports 5000, 6000 and 7000; change only those.
script=$base/deploy.kvs
sed -e "s/-port 5000\b/-port ${ports[0]}/" \
	-e "s/-port 6000\b/-port ${ports[1]}/" \
	-e "s/-port 7000\b/-port ${ports[2]}/" \
	"$here/deploy.kvs" >"$script"
echo "== deploy: $CAIRN admin -host $host -port ${ports[0]} -script $script"
"$CAIRN" admin -host "$host" -port "${ports[0]}" -script "$script"

hosts="$host:${ports[0]},$host:${ports[1]},$host:${ports[2]}"
bench_args=(
	-P "$repo/workloads/workloada"
	-p "cairn.hosts=$hosts"
	-p cairn.store=kvstore
	-p dataintegrity=true
	-p "recordcount=$records"
	-threads "$threads"
)
echo "== load: $records records"
"$CAIRN" bench load "${bench_args[@]}"
echo "== run: workload A, $ops operations"
"$CAIRN" bench run "${bench_args[@]}" -p "operationcount=$ops"
