#!/usr/bin/env bash
# make bench-peers (issue 12): the real YCSB 0.17.0 client (site.ycsb.Client
# from site.ycsb:core on Maven Central) against Cairn lite, Redis and, when
# KVSTORE_JAR points at a kvstore.jar, Oracle NoSQL KVLite: the same client,
# the same record layout and the same pinning, the stores alternating within
# each phase. It prints one Markdown table: ops/s, p99, server CPU µs/op and
# client CPU µs/op for each phase and store.
#
# The stores, each a fresh one in an empty temp dir (under TMPDIR) per rep:
#   cairn   `cairn lite` with Cairn's binding (clients/java/ycsb), layout
#           LAYOUT (minor: one record per field, a read one multiGet of the
#           major path, an insert or update one atomic execute of its field
#           puts, one put for a single field), durability write_no_sync;
#   redis   its own redis-server (Debian's package, installed with apt-get if
#           missing) on a free port, --appendonly yes --appendfsync everysec
#           --save '', with bench/peers' binding (the commands of YCSB's redis
#           binding: a hash per record, HMSET/HGETALL, ZADD _indices);
#   kvlite  `java -jar $KVSTORE_JAR kvlite -secure-config disable` with
#           bench/peers' binding (the calls of YCSB's nosqldb binding: one
#           record per field, a read one multiGet, a write one put per field),
#           compiled here with javac against KVSTORE_JAR, durability
#           COMMIT_WRITE_NO_SYNC.
# YCSB 0.17.0's redis and nosqldb bindings are not on Maven Central (only
# its core is), hence bench/peers (docs/benchmarks.md says more).
#
# Each rep starts every store, loads each (phase load: insert of RECORDS
# records of 10 fields x 100 B), then runs each phase of PHASES against each
# (a: workload A, 50/50 reads/updates; b: 95/5; c: reads; OPS operations,
# zipfian, THREADS threads), then stops them. Within a phase the stores run
# one after another, in STORES order in odd reps and reversed in even ones.
# Servers are pinned to core 0 and the YCSB JVM to core 1 (PIN=1, taskset).
#
# Measured per run: YCSB's throughput; p99 = the largest 99th percentile
# latency YCSB reports over the phase's operation types (READ, UPDATE,
# INSERT); server CPU = user+system ticks of the server process over the run
# (/proc/PID/stat, waited-for children included) / operations; client CPU =
# user+system of the whole YCSB JVM (/usr/bin/time, start-up and JIT
# included) / operations. The table gives the mean over reps.
#
# DURABLE=1 is the durable-load comparison instead: phase load only (unless
# PHASES says more), Cairn with cairn.durability=sync, Redis with
# --appendfsync always, KVLite with COMMIT_SYNC, into OUT=results/peers/durable,
# and the ratio of Cairn's load throughput to Redis's.
#
# Knobs (environment): RECORDS (100000), OPS (100000), THREADS (8), REPS (1),
# PHASES ("load a b c"; load always runs first), STORES ("cairn redis
# kvlite"), PIN (1), DURABLE (0), KVSTORE_JAR (none: KVLite skipped),
# KVSTORE_CP (extra jars for KVLite's server and client, e.g. the kvstore
# module's dependencies), KVLITE_FLAGS (extra kvlite arguments, e.g.
# -noadmin), KVLITE_JAVA_OPTS (the KVLite JVM's options), REDIS_FLAGS (extra
# redis-server arguments), LAYOUT (minor), LITE_FLAGS, JAVA_OPTS (the YCSB
# JVM's), YCSB_ARGS (extra arguments for every YCSB run), OUT (results/peers),
# BIN, MVN, MVN_FLAGS, TMPDIR (where the stores keep their data).
# Output: OUT/rep-N/STORE-PHASE.{txt,status,time} (YCSB's report, its status
# lines, the JVM's CPU), OUT/summary.tsv (one line per run), OUT/table.md,
# OUT/env.txt.
set -euo pipefail
LAYOUT=${LAYOUT:-minor}
RECORDS=${RECORDS:-100000}
OPS=${OPS:-100000}
THREADS=${THREADS:-8}
# shellcheck source-path=SCRIPTDIR source=ycsb.sh
source "$(dirname "${BASH_SOURCE[0]}")/ycsb.sh"

REPS=${REPS:-1}
DURABLE=${DURABLE:-0}
STORES=${STORES:-cairn redis kvlite}
STORES_ASKED=$STORES
KVSTORE_JAR=${KVSTORE_JAR:-}
KVSTORE_CP=${KVSTORE_CP:-}
KVLITE_FLAGS=${KVLITE_FLAGS:-}
KVLITE_JAVA_OPTS=${KVLITE_JAVA_OPTS:-}
REDIS_FLAGS=${REDIS_FLAGS:-}
if [ "$DURABLE" = 1 ]; then
  PHASES=${PHASES:-load}
  OUT=${OUT:-results/peers/durable}
  cairn_durability=sync redis_fsync=always kvlite_durability=COMMIT_SYNC
else
  PHASES=${PHASES:-load a b c}
  OUT=${OUT:-results/peers}
  cairn_durability=write_no_sync redis_fsync=everysec kvlite_durability=COMMIT_WRITE_NO_SYNC
fi
HZ=$(getconf CLK_TCK)
KVSTORE_HINT="build it from github.com/oracle/nosql: make kvlite-jar KVLITE_SRC=<clone or URL>, then KVSTORE_JAR=results/kvlite/lib/kvstore.jar"

peers_die() { echo "bench-peers.sh: $*" >&2; exit 1; }

redis_pid="" redis_dir="" redis_port=""
kvlite_pid="" kvlite_dir="" kvlite_port=""
client_pid=""
peers_cp="" kvlite_cp="" kvlite_server_cp=""

# peers_stop PID: SIGTERM, then SIGKILL after 30 s; waits for it.
peers_stop() {
  local pid=$1 deadline=$((SECONDS + 30))
  kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; return 0; }
  kill -TERM "$pid" 2>/dev/null || true
  while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

peers_stop_redis() {
  if [ -n "$redis_pid" ]; then peers_stop "$redis_pid"; fi
  redis_pid=""
  if [ -n "$redis_dir" ]; then rm -rf "$redis_dir"; fi
  redis_dir=""
}

peers_stop_kvlite() {
  if [ -n "$kvlite_pid" ]; then peers_stop "$kvlite_pid"; fi
  kvlite_pid=""
  if [ -n "$kvlite_dir" ]; then rm -rf "$kvlite_dir"; fi
  kvlite_dir=""
}

peers_stop_all() {
  peers_stop_redis
  peers_stop_kvlite
  ycsb_cleanup
}

# peers_cleanup: on any exit, every process this script started goes: a YCSB
# JVM still running (the child of /usr/bin/time), then the servers.
peers_cleanup() {
  if [ -n "$client_pid" ]; then
    local c
    for c in $(pgrep -P "$client_pid" 2>/dev/null || true); do kill -TERM "$c" 2>/dev/null || true; done
    peers_stop "$client_pid"
    client_pid=""
  fi
  peers_stop_all
}

# peers_check: the tools, the knobs and the store list.
peers_check() {
  ycsb_check
  command -v /usr/bin/time >/dev/null || peers_die "needs /usr/bin/time (apt-get install time)"
  command -v javac >/dev/null || peers_die "javac not found: install JDK 17 (apt-get install openjdk-17-jdk-headless)"
  local n
  for n in RECORDS OPS THREADS REPS; do
    [[ ${!n} =~ ^[1-9][0-9]*$ ]] || peers_die "$n=${!n}: want a positive integer"
  done
  case "$DURABLE" in 0 | 1) ;; *) peers_die "DURABLE=$DURABLE: want 0 or 1" ;; esac
  local p phases="load"
  for p in ${PHASES//,/ }; do
    case "$p" in
      load) ;;
      a | b | c) phases+=" $p" ;;
      *) peers_die "PHASES: unknown phase $p (want load, a, b, c)" ;;
    esac
  done
  PHASES=$phases
  local s stores=""
  for s in ${STORES//,/ }; do
    case "$s" in
      cairn | redis) stores+=" $s" ;;
      kvlite)
        if [ -z "$KVSTORE_JAR" ]; then
          echo "== KVSTORE_JAR not set: skipping Oracle NoSQL KVLite ($KVSTORE_HINT)"
          continue
        fi
        [ -f "$KVSTORE_JAR" ] || peers_die "KVSTORE_JAR=$KVSTORE_JAR: no such file ($KVSTORE_HINT)"
        stores+=" $s"
        ;;
      *) peers_die "STORES: unknown store $s (want cairn, redis, kvlite)" ;;
    esac
  done
  STORES=${stores# }
  [ -n "$STORES" ] || peers_die "no store to run"
}

# peers_install_redis: Debian's redis-server when there is none.
peers_install_redis() {
  if command -v redis-server >/dev/null; then return; fi
  command -v apt-get >/dev/null || peers_die "redis-server not found, and no apt-get: install Redis 7 and put redis-server on PATH"
  local sudo=()
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || peers_die "redis-server not found: install it as root (apt-get install redis-server)"
    sudo=(sudo)
  fi
  echo "== redis-server not found: installing Debian's package (${sudo[*]:+${sudo[*]} }apt-get update; apt-get install -y redis-server)"
  local log
  log=$(mktemp -t cairn-peers-apt.XXXXXX)
  if ! "${sudo[@]}" apt-get update -q >"$log" 2>&1 ||
    ! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q redis-server >>"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    peers_die "installing redis-server failed"
  fi
  rm -f "$log"
  command -v redis-server >/dev/null || peers_die "apt-get installed no redis-server on PATH"
  echo "== installed $(redis-server --version | head -1). This script runs its own redis-server processes, not the system service."
}

# peers_build: Cairn's binding (ycsb.sh), bench/peers' Redis binding with
# Maven, and the KVLite binding with javac against KVSTORE_JAR.
peers_build() {
  ycsb_build
  if [[ " $STORES " == *" redis "* || " $STORES " == *" kvlite "* ]]; then
    echo "== building the Redis binding and fetching Jedis (mvn -f bench/peers package)"
    # shellcheck disable=SC2086
    "$MVN" -q -B -ntp -Dstyle.color=never $MVN_FLAGS -f bench/peers package -Dmaven.test.skip=true 2>&1 |
      sed 's/\x1b\[[0-9;]*m//g'
    local jar=bench/peers/target/cairn-bench-peers-0.1.0-SNAPSHOT.jar
    [ -f "$jar" ] || peers_die "the build wrote no $jar"
    [ -s bench/peers/target/classpath.txt ] || peers_die "the build wrote no bench/peers/target/classpath.txt"
    peers_cp="$(pwd)/$jar:$(cat bench/peers/target/classpath.txt)"
  fi
  if [[ " $STORES " == *" kvlite "* ]]; then
    kvlite_server_cp=$(readlink -f "$KVSTORE_JAR")${KVSTORE_CP:+:$KVSTORE_CP}
    local classes=bench/peers/target/kvlite-classes
    echo "== compiling the KVLite binding against $KVSTORE_JAR (javac bench/peers/src/kvlite/java)"
    rm -rf "$classes"
    mkdir -p "$classes"
    javac -nowarn -Xlint:-path -d "$classes" -cp "$(cat bench/peers/target/classpath.txt):$kvlite_server_cp" \
      bench/peers/src/kvlite/java/io/cairndb/peers/KVLiteClient.java ||
      peers_die "the KVLite binding does not compile against $KVSTORE_JAR: it needs Oracle NoSQL's oracle.kv key/value API (KVStoreFactory, Key, multiGet, put); set KVSTORE_CP if classes it names are in other jars"
    kvlite_cp="$(pwd)/$classes:$(cat bench/peers/target/classpath.txt):$kvlite_server_cp"
  fi
}

# peers_free_port SPAN: a port P such that P .. P+SPAN-1 have no TCP socket
# on this host (KVLite takes P and, for JE HA, P+2 .. P+9).
peers_free_port() {
  local span=$1 h p i ok try
  local -A used=()
  while read -r h; do
    used[$((16#$h))]=1
  done < <(awk 'FNR > 1 {split($2, a, ":"); print a[2]}' /proc/net/tcp /proc/net/tcp6 2>/dev/null)
  for try in $(seq 200); do
    p=$((20000 + RANDOM % 30000))
    ok=1
    for ((i = p; i < p + span; i++)); do
      if [ -n "${used[$i]:-}" ]; then ok=0 && break; fi
    done
    if [ "$ok" = 1 ]; then echo "$p" && return; fi
  done
  peers_die "found no $span free ports in a row (tried $try times)"
}

# peers_wait_log PID FILE PATTERN SECONDS WHAT [HINT]: until FILE has a line
# matching PATTERN; fails, with FILE's tail and HINT, if PID exits first or
# the time is up.
peers_wait_log() {
  local pid=$1 file=$2 pattern=$3 deadline=$((SECONDS + $4)) what=$5 hint=${6:+ ($6)}
  until grep -qE "$pattern" "$file" 2>/dev/null; do
    kill -0 "$pid" 2>/dev/null || { tail -30 "$file" >&2; peers_die "$what exited before it was ready$hint"; }
    [ $SECONDS -lt $deadline ] || { tail -30 "$file" >&2; peers_die "$what not ready within $4 s$hint"; }
    sleep 0.1
  done
}

peers_start_redis() {
  redis_dir=$(mktemp -d -t cairn-peers-redis.XXXXXX)
  redis_port=$(peers_free_port 1)
  # shellcheck disable=SC2086
  "${server_pin[@]}" redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$redis_dir" \
    --appendonly yes --appendfsync "$redis_fsync" --save '' --daemonize no $REDIS_FLAGS >"$redis_dir/redis.log" 2>&1 &
  redis_pid=$!
  peers_wait_log "$redis_pid" "$redis_dir/redis.log" 'Ready to accept connections' 30 redis-server
  echo "== redis-server (pid $redis_pid) ready at 127.0.0.1:$redis_port, AOF appendfsync $redis_fsync, dir $redis_dir"
}

peers_start_kvlite() {
  kvlite_dir=$(mktemp -d -t cairn-peers-kvlite.XXXXXX)
  kvlite_port=$(peers_free_port 10)
  local main=(-jar "$KVSTORE_JAR")
  if [ -n "$KVSTORE_CP" ]; then main=(-cp "$kvlite_server_cp" oracle.kv.impl.util.KVStoreMain); fi
  # shellcheck disable=SC2086
  "${server_pin[@]}" java $KVLITE_JAVA_OPTS "${main[@]}" kvlite -root "$kvlite_dir/root" -store kvstore \
    -host localhost -port "$kvlite_port" -secure-config disable $KVLITE_FLAGS >"$kvlite_dir/kvlite.log" 2>&1 &
  kvlite_pid=$!
  peers_wait_log "$kvlite_pid" "$kvlite_dir/kvlite.log" 'Created new kvlite store|Opened existing store' 180 \
    "KVLite ($KVSTORE_JAR kvlite)" "if it names a missing class, set KVSTORE_CP to the kvstore module's dependencies"
  # Created is printed once the store is configured; wait until it serves.
  "${client_pin[@]}" java -cp "$kvlite_cp" io.cairndb.peers.KVLiteClient "localhost:$kvlite_port" kvstore 120 ||
    { tail -30 "$kvlite_dir/kvlite.log" >&2; peers_die "KVLite did not answer a read"; }
  echo "== KVLite (pid $kvlite_pid) ready at localhost:$kvlite_port, store kvstore, root $kvlite_dir"
}

peers_start_all() {
  local s
  for s in $STORES; do
    case "$s" in
      cairn) ycsb_start_lite ;;
      redis) peers_start_redis ;;
      kvlite) peers_start_kvlite ;;
    esac
  done
}

server_pid() {
  case "$1" in
    cairn) echo "$lite_pid" ;;
    redis) echo "$redis_pid" ;;
    kvlite) echo "$kvlite_pid" ;;
  esac
}

# peers_run REP STORE PHASE: one YCSB run; its raw output in
# OUT/rep-REP/STORE-PHASE.*, one line in summary.tsv.
peers_run() {
  local rep=$1 store=$2 phase=$3 f="$OUT/rep-$1/$2-$3"
  # shellcheck disable=SC2206
  local cmd=(java $JAVA_OPTS -cp)
  case "$store" in
    cairn) cmd+=("$ycsb_cp" site.ycsb.Client) ;;
    redis) cmd+=("$peers_cp" site.ycsb.Client) ;;
    kvlite) cmd+=("$kvlite_cp" site.ycsb.Client) ;;
  esac
  if [ "$phase" = load ]; then
    cmd+=(-load -P workloads/workloada)
  else
    cmd+=(-t -P "workloads/workload$phase")
  fi
  case "$store" in
    cairn) cmd+=(-db io.cairndb.ycsb.CairnClient -p cairn.hosts="$lite_addr" -p cairn.layout="$LAYOUT"
      -p cairn.durability="$cairn_durability") ;;
    redis) cmd+=(-db io.cairndb.peers.RedisClient -p redis.host=127.0.0.1 -p redis.port="$redis_port") ;;
    kvlite) cmd+=(-db io.cairndb.peers.KVLiteClient -p storeName=kvstore -p helperHost="localhost:$kvlite_port"
      -p durability="$kvlite_durability") ;;
  esac
  cmd+=(-p recordcount="$RECORDS" -p operationcount="$OPS" -p fieldcount=10 -p fieldlength=100
    -p requestdistribution=zipfian -threads "$THREADS" -s)
  # shellcheck disable=SC2206
  cmd+=($YCSB_ARGS)

  local spid s0 s1 o0=0 o1=0 other
  spid=$(server_pid "$store")
  s0=$(cpu_ticks "$spid")
  for other in $STORES; do
    if [ "$other" != "$store" ]; then o0=$((o0 + $(cpu_ticks "$(server_pid "$other")"))); fi
  done
  echo "${cmd[*]}" >"$f.cmd"
  "${client_pin[@]}" /usr/bin/time -f '%U %S' -o "$f.time" "${cmd[@]}" >"$f.txt" 2>"$f.status" &
  client_pid=$!
  if ! wait "$client_pid"; then
    client_pid=""
    tail -20 "$f.status" >&2
    peers_die "YCSB $phase against $store failed (rep $rep): $f.status, $f.txt"
  fi
  client_pid=""
  s1=$(cpu_ticks "$spid")
  for other in $STORES; do
    if [ "$other" != "$store" ]; then o1=$((o1 + $(cpu_ticks "$(server_pid "$other")"))); fi
  done

  # ops, ops/s, p99 (max over the operation types), p99 of READ, UPDATE,
  # INSERT, and operations whose return was not OK.
  local ops tput p99 rp99 up99 ip99 errors ccpu
  read -r ops tput p99 rp99 up99 ip99 errors < <(awk -F', ' '
    $1 ~ /^\[(READ|UPDATE|INSERT|SCAN|DELETE)\]$/ {
      op = substr($1, 2, length($1) - 2)
      if ($2 == "Operations") ops += $3
      else if ($2 == "99thPercentileLatency(us)") { p[op] = $3; if ($3 + 0 > max) max = $3 + 0 }
      else if ($2 ~ /^Return=/ && $2 != "Return=OK") err += $3
    }
    $1 == "[OVERALL]" && $2 == "Throughput(ops/sec)" { tput = $3 }
    END {
      printf "%d %.0f %d %s %s %s %d\n", ops, tput, max, ("READ" in p) ? p["READ"] : "-",
        ("UPDATE" in p) ? p["UPDATE"] : "-", ("INSERT" in p) ? p["INSERT"] : "-", err
    }' "$f.txt")
  [ "$ops" -gt 0 ] || peers_die "$f.txt reports no operations"
  ccpu=$(awk '{print $1 + $2}' "$f.time")
  awk -v OFS='\t' -v rep="$rep" -v store="$store" -v phase="$phase" -v ops="$ops" -v tput="$tput" -v p99="$p99" \
    -v rp="$rp99" -v up="$up99" -v ip="$ip99" -v s="$((s1 - s0))" -v o="$((o1 - o0))" -v hz="$HZ" -v c="$ccpu" \
    -v err="$errors" -v load="$(cut -d' ' -f1-3 /proc/loadavg)" 'BEGIN {
      print rep, store, phase, ops, tput, p99, rp, up, ip, sprintf("%.2f", s / hz), sprintf("%.1f", s / hz * 1e6 / ops),
        sprintf("%.2f", c), sprintf("%.1f", c * 1e6 / ops), err, sprintf("%.2f", o / hz), load
    }' >>"$OUT/summary.tsv"
  tail -1 "$OUT/summary.tsv" | awk -F'\t' '{
    printf "   %-6s %-4s %8d ops/s  p99 %6d us  server %6.1f us/op  client %6.1f us/op%s\n", $2, $3, $5, $6, $11, $13,
      ($14 > 0 ? "  (" $14 " not OK)" : "")
  }'
}

# peers_table: the Markdown table of summary.tsv, means over reps, phases
# and stores in run order.
peers_table() {
  awk -F'\t' -v phases="$PHASES" -v stores="$STORES" -v durable="$DURABLE" '
    NR > 1 {
      k = $3 SUBSEP $2
      n[k]++; t[k] += $5; p[k] += $6; s[k] += $11; c[k] += $13; e[k] += $14; reps = $1 > reps ? $1 : reps
    }
    END {
      np = split(phases, ph, " "); ns = split(stores, st, " ")
      print "| phase | store | ops/s | p99 µs | server CPU µs/op | client CPU µs/op |"
      print "|---|---|---:|---:|---:|---:|"
      for (i = 1; i <= np; i++) for (j = 1; j <= ns; j++) {
        k = ph[i] SUBSEP st[j]
        if (!n[k]) continue
        printf "| %s | %s | %.0f | %.0f | %.1f | %.1f |\n", ph[i], st[j], t[k] / n[k], p[k] / n[k], s[k] / n[k], c[k] / n[k]
        errs += e[k]
      }
      printf "\nMeans over %d rep(s). p99: the largest 99th percentile YCSB reports over the phase'"'"'s operation types.\n", reps
      if (errs) printf "%d operations did not return OK (summary.tsv, column errors).\n", errs
      if (durable == 1) {
        kc = "load" SUBSEP "cairn"; kr = "load" SUBSEP "redis"
        if (n[kc] && n[kr]) printf "Durable load, Cairn lite (sync) / Redis (appendfsync always): %.2fx (goal: at least 1.5x)\n", (t[kc] / n[kc]) / (t[kr] / n[kr])
      }
      line = ""
      for (i = 1; i <= np; i++) {
        kc = ph[i] SUBSEP "cairn"; kk = ph[i] SUBSEP "kvlite"
        if (n[kc] && n[kk]) line = line sprintf("%s %s %.2fx", line == "" ? "" : ",", ph[i], (t[kc] / n[kc]) / (t[kk] / n[kk]))
      }
      if (line != "") printf "Throughput, Cairn lite / Oracle NoSQL KVLite:%s (goal: at least 2x on b and c)\n", line
    }' "$OUT/summary.tsv"
}

peers_main() {
  peers_check
  trap peers_cleanup EXIT
  trap 'exit 130' INT TERM
  if [[ " $STORES " == *" redis "* ]]; then peers_install_redis; fi
  peers_build
  ycsb_pin
  if [ ${#server_pin[@]} -gt 0 ]; then echo "== every server on core 0, the YCSB JVM on core 1"; fi
  mkdir -p "$OUT"
  rm -rf "$OUT"/rep-* "$OUT/summary.tsv" "$OUT/table.md" "$OUT/env.txt"
  local data
  data=$(dirname "$(mktemp -u -t x.XXXXXX)")
  {
    echo "cairn $(git describe --always --dirty 2>/dev/null || echo unknown), $("$BIN" version 2>/dev/null | head -1 || true)"
    echo "java $(java -version 2>&1 | head -1)"
    if [[ " $STORES " == *" redis "* ]]; then echo "redis $(redis-server --version | head -1)"; fi
    if [ -n "$KVSTORE_JAR" ]; then echo "kvstore.jar $KVSTORE_JAR"; fi
    echo "data under $data ($(df -PT "$data" | awk 'NR == 2 {print $2}'))"
    echo "RECORDS=$RECORDS OPS=$OPS THREADS=$THREADS REPS=$REPS PHASES=\"$PHASES\" STORES=\"$STORES\" DURABLE=$DURABLE LAYOUT=$LAYOUT PIN=$PIN"
    echo "durability: cairn $cairn_durability, redis appendfsync $redis_fsync, kvlite $kvlite_durability"
    echo "nproc $(nproc), loadavg $(cut -d' ' -f1-3 /proc/loadavg)"
  } >"$OUT/env.txt"
  sed 's/^/== /' "$OUT/env.txt"
  printf 'rep\tstore\tphase\tops\tops_per_sec\tp99_us\tread_p99_us\tupdate_p99_us\tinsert_p99_us\tserver_cpu_s\tserver_us_per_op\tclient_cpu_s\tclient_us_per_op\terrors\tidle_servers_cpu_s\tloadavg\n' >"$OUT/summary.tsv"

  local rep order s phase
  for rep in $(seq "$REPS"); do
    order=$STORES
    if [ $((rep % 2)) = 0 ]; then order=$(echo "$STORES" | tr ' ' '\n' | tac | paste -sd' '); fi
    mkdir -p "$OUT/rep-$rep"
    echo "== rep $rep/$REPS: fresh stores, order $order"
    peers_start_all
    for phase in $PHASES; do
      if [ "$phase" = load ]; then
        echo "== rep $rep, load: $RECORDS records of 10 fields x 100 B, $THREADS threads"
      else
        echo "== rep $rep, workload ${phase^^}: $OPS operations, zipfian, $THREADS threads"
      fi
      for s in $order; do
        peers_run "$rep" "$s" "$phase"
      done
    done
    peers_stop_all
  done
  echo
  local what=()
  for s in $STORES; do
    case "$s" in
      cairn) what+=("cairn: Cairn lite, layout $LAYOUT, cairn.durability=$cairn_durability") ;;
      redis) what+=("redis: Redis $(redis-server --version | sed -n 's/.* v=\([^ ]*\).*/\1/p'), AOF appendfsync $redis_fsync") ;;
      kvlite) what+=("kvlite: Oracle NoSQL KVLite, durability $kvlite_durability") ;;
    esac
  done
  if [[ " ${STORES_ASKED//,/ } " == *" kvlite "* && -z "$KVSTORE_JAR" ]]; then
    what+=("kvlite: skipped, KVSTORE_JAR not set")
  fi
  if [ "$DURABLE" = 1 ]; then echo "Durable load comparison (DURABLE=1)"; fi
  printf '%s\n' "${what[@]}"
  if [ "$PHASES" = load ]; then
    echo "$RECORDS records x 10 fields x 100 B, $THREADS threads; $OUT/summary.tsv"
  else
    echo "$RECORDS records x 10 fields x 100 B, $OPS operations per workload run, zipfian, $THREADS threads; $OUT/summary.tsv"
  fi
  echo
  peers_table | tee "$OUT/table.md"
}

peers_main "$@"
