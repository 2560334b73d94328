#!/usr/bin/env bash
# make ycsb-bench: the real YCSB 0.17.0 with Cairn's binding against the
# built-in `cairn bench` on one store, in one session. It builds the binding,
# starts one `cairn lite`, loads it once with cairn bench, then runs workload A
# for DURATION seconds at a time, alternating bench, ycsb, bench, ycsb, ...
# (REPS pairs), each with THREADS threads (operationcount=10^9 and
# maxexecutiontime=DURATION: YCSB 0.17 starts no thread with operationcount=0).
# For each run it records throughput, the client process's CPU (user+system
# over the whole process, from /usr/bin/time, and over the steady part after
# the first 10 s status line, from /proc), the server's CPU (/proc of lite)
# and the CPU everything else on the machine used meanwhile (/proc/stat), each
# per operation. Lite runs on core 0 and the client on core 1 (PIN=1).
#
# Knobs: REPS (2), DURATION (30 s), RECORDS (100000), THREADS (8), LAYOUT
# (value), OUT (results/ycsb), JAVA_OPTS, and those of scripts/ycsb.sh.
# Output: OUT/{bench,ycsb}-N.{txt,status,time} and OUT/summary.tsv.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=ycsb.sh
source "$(dirname "${BASH_SOURCE[0]}")/ycsb.sh"
REPS=${REPS:-2}
DURATION=${DURATION:-30}
OUT=${OUT:-results/ycsb}
HZ=$(getconf CLK_TCK)
command -v /usr/bin/time >/dev/null || ycsb_die "needs /usr/bin/time (apt-get install time)"

# busy_ticks: ticks all CPUs spent busy (not idle or iowait).
busy_ticks() { awk '/^cpu /{print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat; }
# cpu_ticks and overall are in ycsb.sh.

# run_one KIND N: one time-bound run phase of cairn bench or YCSB.
run_one() {
  local kind=$1 n=$2 f="$OUT/$1-$2" cmd
  if [ "$kind" = bench ]; then
    cmd=("$BIN" bench run -db cairn -P "$WORKLOAD" -p cairn.hosts="$lite_addr" -p cairn.layout="$LAYOUT"
      -p recordcount="$RECORDS" -p fieldcount=10 -p fieldlength=100 -threads "$THREADS" -s)
  else
    # shellcheck disable=SC2206
    cmd=(java $JAVA_OPTS -cp "$ycsb_cp" site.ycsb.Client -t -db io.cairndb.ycsb.CairnClient -P "$WORKLOAD"
      -p cairn.hosts="$lite_addr" -p cairn.layout="$LAYOUT" -p recordcount="$RECORDS" -p fieldcount=10
      -p fieldlength=100 -threads "$THREADS" -s)
  fi
  cmd+=(-p operationcount=1000000000 -p maxexecutiontime="$DURATION")
  local s0 b0 s1 b1 tpid cpid c10="" o10="" t10="" deadline
  s0=$(cpu_ticks "$lite_pid")
  b0=$(busy_ticks)
  "${client_pin[@]}" /usr/bin/time -f '%U %S' -o "$f.time" "${cmd[@]}" >"$f.txt" 2>"$f.status" &
  tpid=$!
  # The steady part starts at the first status line (10 s in): take the
  # client's CPU and operation count there.
  deadline=$((SECONDS + DURATION + 60))
  while kill -0 "$tpid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do
    if [ -z "$c10" ] && grep -qE ' 1[0-9] sec: [0-9]+ operations' "$f.status" 2>/dev/null; then
      cpid=$(pgrep -P "$tpid" | head -1 || true)
      if [ -n "$cpid" ]; then c10=$(cpu_ticks "$cpid"); fi
      read -r t10 o10 < <(grep -m1 -oE ' 1[0-9] sec: [0-9]+' "$f.status" | awk '{print $1, $3}')
    fi
    sleep 0.1
  done
  wait "$tpid" || { cat "$f.status" "$f.txt" >&2; ycsb_die "$kind run $n failed"; }
  s1=$(cpu_ticks "$lite_pid")
  b1=$(busy_ticks)
  local tput ms ops ccpu scpu ocpu
  tput=$(overall "$f.txt" 'Throughput(ops/sec)')
  ms=$(overall "$f.txt" 'RunTime(ms)')
  if [ -z "$tput" ] || [ -z "$ms" ]; then ycsb_die "$f.txt has no [OVERALL] lines"; fi
  ops=$(awk -v t="$tput" -v ms="$ms" 'BEGIN{printf "%d", t * ms / 1000 + 0.5}')
  ccpu=$(awk '{print $1 + $2}' "$f.time")
  scpu=$(awk -v d=$((s1 - s0)) -v hz="$HZ" 'BEGIN{print d / hz}')
  ocpu=$(awk -v d=$((b1 - b0)) -v hz="$HZ" -v a="$ccpu" -v b="$scpu" 'BEGIN{o = d / hz - a - b; printf "%.2f", o < 0 ? 0 : o}')
  local steady="-" stput="-"
  if [ -n "$c10" ] && [ -n "$o10" ] && [ "$ops" -gt "$o10" ]; then
    steady=$(awk -v c="$ccpu" -v c10="$c10" -v hz="$HZ" -v o="$ops" -v o10="$o10" \
      'BEGIN{printf "%.1f", (c - c10 / hz) * 1e6 / (o - o10)}')
    stput=$(awk -v o="$ops" -v o10="$o10" -v ms="$ms" -v t10="$t10" 'BEGIN{printf "%.0f", (o - o10) / (ms / 1000 - t10)}')
  fi
  local errors
  errors=$(awk -F', ' '$2 == "Return=ERROR" || $2 == "Return=NOT_FOUND" {s += $3} END {print s + 0}' "$f.txt")
  printf '%s\t%s\t%.0f\t%s\t%d\t%.2f\t%.1f\t%s\t%.2f\t%.1f\t%s\t%s\t%s\n' "$kind" "$n" "$tput" "$stput" "$ops" "$ccpu" \
    "$(awk -v c="$ccpu" -v o="$ops" 'BEGIN{print c * 1e6 / o}')" "$steady" "$scpu" \
    "$(awk -v c="$scpu" -v o="$ops" 'BEGIN{print c * 1e6 / o}')" "$ocpu" "$errors" \
    "$(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/summary.tsv"
}

ycsb_check
trap ycsb_cleanup EXIT
trap 'exit 130' INT TERM
ycsb_build
ycsb_pin
mkdir -p "$OUT"
ycsb_start_lite
echo "== cairn bench load: $RECORDS records (10 fields x 100 B), $THREADS threads, layout $LAYOUT"
"${client_pin[@]}" "$BIN" bench load -db cairn -P "$WORKLOAD" -p cairn.hosts="$lite_addr" -p cairn.layout="$LAYOUT" \
  -p recordcount="$RECORDS" -p fieldcount=10 -p fieldlength=100 -threads "$THREADS" >"$OUT/load.txt" 2>&1 ||
  { cat "$OUT/load.txt" >&2; ycsb_die "load failed"; }
grep -E '^\[OVERALL\]|^\[INSERT\], (Operations|Return)' "$OUT/load.txt"
echo "== workload A, $DURATION s per run, $THREADS threads, $REPS pairs (bench, ycsb, ...); $(git describe --always --dirty 2>/dev/null || true)"
printf 'client\trun\tops_per_sec\tsteady_ops_per_sec\tops\tclient_cpu_s\tclient_us_per_op\tclient_steady_us_per_op\tserver_cpu_s\tserver_us_per_op\tother_cpu_s\terrors\tloadavg\n' |
  tee "$OUT/summary.tsv"
for n in $(seq "$REPS"); do
  run_one bench "$n"
  run_one ycsb "$n"
done
awk -F'\t' 'NR > 1 {t[$1] += $3; c[$1]++; cu[$1] += $7; su[$1] += $10; if ($8 != "-") {st[$1] += $8; sc[$1]++}; if ($4 != "-") {sp[$1] += $4; spc[$1]++}}
  END {
    printf "\nmean over %d pairs: cairn bench %.0f ops/s, YCSB %.0f ops/s: YCSB/bench = %.3f\n", c["bench"], t["bench"] / c["bench"], t["ycsb"] / c["ycsb"], t["ycsb"] / t["bench"]
    if (spc["bench"] && spc["ycsb"]) printf "after the first 10 s status line: cairn bench %.0f ops/s, YCSB %.0f ops/s: YCSB/bench = %.3f\n", sp["bench"] / spc["bench"], sp["ycsb"] / spc["ycsb"], (sp["ycsb"] / spc["ycsb"]) / (sp["bench"] / spc["bench"])
    printf "client CPU per op (whole process): bench %.1f us, YCSB JVM %.1f us; steady (after 10 s): bench %.1f us, YCSB JVM %.1f us\n", cu["bench"] / c["bench"], cu["ycsb"] / c["ycsb"], sc["bench"] ? st["bench"] / sc["bench"] : 0, sc["ycsb"] ? st["ycsb"] / sc["ycsb"] : 0
    printf "server CPU per op: under bench %.1f us, under YCSB %.1f us\n", su["bench"] / c["bench"], su["ycsb"] / c["ycsb"]
  }' "$OUT/summary.tsv" | tee "$OUT/verdict.txt"
