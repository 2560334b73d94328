#!/usr/bin/env bash
# bench-lite-ab.sh: a before/after comparison of cairn lite settings over
# loopback. For each repetition, workload and distribution it runs
# scripts/bench-lite.sh (load, then run, on a fresh store) with the lite
# flags BEFORE and then AFTER (swapping the order on even repetitions), so
# that the two alternate through the machine's noise, and then prints, per
# configuration, the median throughput and server CPU per operation of each
# and their ratios.
#
#   scripts/bench-lite-ab.sh                           # 2 repetitions, 30 s runs
#   REPS=3 DURATION=20 WORKLOADS=c scripts/bench-lite-ab.sh
#
# Environment (default): BEFORE ("--stream-workers 0 --gc-percent 0", the
# server as it was before docs/benchmarks.md's two fixes), AFTER ("", the
# defaults), REPS (2), OUT (results/ab), and WORKLOADS, DISTS, DURATION,
# RECORDS, THREADS, BIN, PORT as for bench-lite.sh. ONLY_REPORT=1 prints
# the table of an earlier OUT without running anything.
#
# Columns: median throughput; median server CPU per operation (lite's
# user+system time over the run / operations); median CPU per operation of
# benchmark and server together, which bounds throughput when the two share
# the machine's cores. The CPU figures move much less than throughput when
# other processes take CPU (see other_cpu_s in each summary.tsv).
set -euo pipefail

cd "$(dirname "$0")/.."
BEFORE=${BEFORE---stream-workers 0 --gc-percent 0}
AFTER=${AFTER-}
REPS=${REPS:-2}
OUT=${OUT:-results/ab}
WORKLOADS=${WORKLOADS:-a b c}
DISTS=${DISTS:-zipfian uniform}
export DURATION RECORDS THREADS BIN PORT

[[ ${ONLY_REPORT:-} == 1 ]] && REPS=0 || rm -rf "$OUT"
for rep in $(seq "$REPS"); do
	order="before after"
	((rep % 2 == 0)) && order="after before"
	for w in $WORKLOADS; do
		for d in $DISTS; do
			for v in $order; do
				flags=$BEFORE
				[[ $v == after ]] && flags=$AFTER
				echo "== rep $rep, workload $w, $d, $v (lite flags: ${flags:-none})"
				DBS=cairn WORKLOADS=$w DISTS=$d LITE_FLAGS=$flags OUT="$OUT/$v-$rep" scripts/bench-lite.sh | grep -v '^bench-lite:'
			done
		done
	done
done

# Medians per variant and configuration: throughput, and server and total
# CPU per operation in microseconds (operations = throughput x runtime).
for f in "$OUT"/*/summary.tsv; do
	v=$(basename "$(dirname "$f")")
	awk -v v="${v%-*}" -F'\t' '$1 == "run" {
		file = FILENAME; sub(/summary.tsv$/, "run-" $2 "-" $3 "-" $4 ".txt", file)
		ms = 0
		while ((getline line < file) > 0) if (line ~ /^\[OVERALL\], RunTime/) { split(line, p, ", "); ms = p[3] }
		ops = $5 * ms / 1000
		printf "%s\t%s\t%s\t%s\t%.1f\t%.1f\n", v, $3, $4, $5, $7 * 1e6 / ops, ($6 + $7) * 1e6 / ops
	}' "$f"
done | sort >"$OUT/runs.tsv"
printf '%-10s %-8s %11s %11s %6s %10s %10s %6s %10s %10s %6s\n' workload dist "before op/s" "after op/s" ratio \
	"before srv" "after srv" ratio "before all" "after all" ratio
awk -F'\t' '
function median(s,    a, n, i, j, t) {
	n = split(s, a, " ")
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ k = $2 "\t" $3; tp[$1, k] = tp[$1, k] " " $4; us[$1, k] = us[$1, k] " " $5; all[$1, k] = all[$1, k] " " $6; keys[k] = 1 }
END {
	for (k in keys) {
		split(k, p, "\t")
		tb = median(tp["before", k]); ta = median(tp["after", k])
		ub = median(us["before", k]); ua = median(us["after", k])
		cb = median(all["before", k]); ca = median(all["after", k])
		printf "%-10s %-8s %11.0f %11.0f %6.2f %10.1f %10.1f %6.2f %10.1f %10.1f %6.2f\n", p[1], p[2], tb, ta, ta / tb, ub, ua, ua / ub, cb, ca, ca / cb
	}
}' "$OUT/runs.tsv" | sort | tee "$OUT/ratios.txt"
echo "(throughput in ops/s; srv: server CPU us per operation; all: benchmark + server CPU us per operation; medians of $OUT/runs.tsv)"
