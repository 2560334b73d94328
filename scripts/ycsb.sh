#!/usr/bin/env bash
# make ycsb: builds the Java client and the YCSB binding (clients/java, Maven),
# starts `cairn lite` on a free port in a temp root, and runs the real YCSB
# 0.17.0 client (site.ycsb.Client with io.cairndb.ycsb.CairnClient) against
# it: the load phase, then workload A, printing YCSB's own report of each.
# Lite is stopped (SIGTERM) and its root removed on exit, however it exits.
#
# Knobs (environment): RECORDS (default 100000 records of 10 fields x 100 B),
# OPS (operations of the run phase, default 400000), THREADS (8), LAYOUT
# (value or minor: cairn.layout), WORKLOAD (workloads/workloada), BIN
# (bin/cairn), PIN (1: with taskset and 2+ cores, lite on core 0 and the YCSB
# JVM on core 1; 0: no pinning), JAVA_OPTS, YCSB_ARGS (extra arguments for
# both phases, e.g. "-p cairn.durability=sync"), MVN (mvn), MVN_FLAGS,
# YCSB_CP (run with this classpath instead of building), LITE_FLAGS.
#
# The functions are also used by scripts/ycsb-vs-bench.sh, which sources
# this file.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

BIN=${BIN:-bin/cairn}
RECORDS=${RECORDS:-100000}
OPS=${OPS:-400000}
THREADS=${THREADS:-8}
LAYOUT=${LAYOUT:-value}
WORKLOAD=${WORKLOAD:-workloads/workloada}
PIN=${PIN:-1}
MVN=${MVN:-mvn}
MVN_FLAGS=${MVN_FLAGS:-}
JAVA_OPTS=${JAVA_OPTS:-}
YCSB_ARGS=${YCSB_ARGS:-}

ycsb_root=""
lite_pid=""
lite_addr=""
server_pin=()
client_pin=()
ycsb_cp=""

ycsb_cleanup() {
  if [ -n "$lite_pid" ] && kill -0 "$lite_pid" 2>/dev/null; then
    kill -TERM "$lite_pid"
    wait "$lite_pid" || true
  fi
  lite_pid=""
  if [ -n "$ycsb_root" ]; then rm -rf "$ycsb_root"; fi
  ycsb_root=""
}

ycsb_die() { echo "ycsb.sh: $*" >&2; exit 1; }

# Measurement helpers (scripts/ycsb-vs-bench.sh, scripts/bench-peers.sh).
# cpu_ticks PID: user+system clock ticks the process has used, with those of
# its children it has waited for (a Redis AOF rewrite runs in a child).
cpu_ticks() { awk '{print $14 + $15 + $16 + $17}' "/proc/$1/stat"; }
# overall FILE NAME: a value of the [OVERALL] lines of a YCSB report.
overall() { awk -F', ' -v n="$2" '$1 == "[OVERALL]" && $2 == n {print $3}' "$1"; }

# ycsb_check: the tools are there.
ycsb_check() {
  [ -x "$BIN" ] || ycsb_die "no $BIN: run make build first"
  command -v java >/dev/null || ycsb_die "java not found: install JDK 17 (apt-get install openjdk-17-jdk-headless)"
  command -v "$MVN" >/dev/null || ycsb_die "$MVN not found: install Maven (apt-get install maven)"
  [ -f "$WORKLOAD" ] || ycsb_die "no workload file $WORKLOAD"
  case "${LAYOUT,,}" in value|minor) ;; *) ycsb_die "LAYOUT=$LAYOUT: want value or minor" ;; esac
}

# ycsb_pin: with taskset and at least two cores, lite on core 0 and the
# clients (the YCSB JVM, cairn bench) on core 1.
ycsb_pin() {
  if [ "$PIN" = 1 ] && command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
    server_pin=(taskset -c 0)
    client_pin=(taskset -c 1)
    echo "== pinning: cairn lite to core 0, the benchmark client to core 1 (taskset; PIN=0 to turn off)"
  else
    server_pin=()
    client_pin=()
    echo "== not pinning (PIN=$PIN, taskset $(command -v taskset >/dev/null && echo present || echo absent), $(nproc) cores)"
  fi
}

# ycsb_build: cairn-client and cairn-ycsb jars, and the runtime classpath.
ycsb_build() {
  if [ -n "${YCSB_CP:-}" ]; then
    echo "== not building: YCSB_CP is set"
    ycsb_cp=$YCSB_CP
    return
  fi
  echo "== building the Java client and the YCSB binding (mvn -f clients/java -pl ycsb -am package)"
  # shellcheck disable=SC2086
  # Debian's Maven prints colour resets even with -B; strip them, keep errors.
  "$MVN" -q -B -ntp -Dstyle.color=never $MVN_FLAGS -f clients/java -pl ycsb -am package -Dmaven.test.skip=true 2>&1 |
    sed 's/\x1b\[[0-9;]*m//g'
  local jar="" j
  for j in clients/java/ycsb/target/cairn-ycsb-*.jar; do
    case "$j" in *-sources.jar | *-tests.jar) ;; *) [ -f "$j" ] && jar=$j && break ;; esac
  done
  [ -n "$jar" ] || ycsb_die "the build wrote no clients/java/ycsb/target/cairn-ycsb-*.jar"
  [ -s clients/java/ycsb/target/classpath.txt ] || ycsb_die "the build wrote no clients/java/ycsb/target/classpath.txt"
  ycsb_cp="$(pwd)/$jar:$(cat clients/java/ycsb/target/classpath.txt)"
}

# ycsb_start_lite: a fresh store in a temp root, on a port lite picks; waits
# (30 s at most) for its "ready at" line and sets lite_addr.
ycsb_start_lite() {
  ycsb_root=$(mktemp -d -t cairn-ycsb.XXXXXX)
  # shellcheck disable=SC2086
  "${server_pin[@]}" "$BIN" lite --root "$ycsb_root/store" --port 0 ${LITE_FLAGS:-} >"$ycsb_root/lite.log" 2>&1 &
  lite_pid=$!
  local deadline=$((SECONDS + 30))
  until lite_addr=$(sed -n 's/.* ready at \([^ ]*\)$/\1/p' "$ycsb_root/lite.log" 2>/dev/null) && [ -n "$lite_addr" ]; do
    kill -0 "$lite_pid" 2>/dev/null || { cat "$ycsb_root/lite.log" >&2; ycsb_die "cairn lite exited before it was ready"; }
    [ $SECONDS -lt $deadline ] || { cat "$ycsb_root/lite.log" >&2; ycsb_die "cairn lite not ready within 30 s"; }
    sleep 0.05
  done
  echo "== cairn lite (pid $lite_pid) ready at $lite_addr, root $ycsb_root"
}

# ycsb_client PHASE [ARGS...]: site.ycsb.Client (-load or -t) with the binding
# against lite, YCSB's report on stdout and its status lines on stderr.
ycsb_client() {
  local phase=$1
  shift
  # shellcheck disable=SC2086
  "${client_pin[@]}" java $JAVA_OPTS -cp "$ycsb_cp" site.ycsb.Client "$phase" \
    -db io.cairndb.ycsb.CairnClient -P "$WORKLOAD" \
    -p cairn.hosts="$lite_addr" -p cairn.layout="$LAYOUT" \
    -p recordcount="$RECORDS" -p fieldcount=10 -p fieldlength=100 \
    -threads "$THREADS" -s "$@" $YCSB_ARGS
}

ycsb_main() {
  ycsb_check
  trap ycsb_cleanup EXIT
  trap 'exit 130' INT TERM
  ycsb_build
  ycsb_pin
  ycsb_start_lite
  echo "== YCSB load: $RECORDS records (10 fields x 100 B), $THREADS threads, layout $LAYOUT"
  ycsb_client -load
  echo
  echo "== YCSB run: $WORKLOAD, $OPS operations, $THREADS threads, layout $LAYOUT"
  ycsb_client -t -p operationcount="$OPS"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  ycsb_main "$@"
fi
