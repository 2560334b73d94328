#!/usr/bin/env bash
# Regenerates src/test/resources/golden: records in cairn bench's value layout
# as Go's cairn bench writes them (internal/bench/layout.go), for
# RecordCodecTest. It starts `cairn lite` on a free port in a temp dir, loads
# a few records with dataintegrity=true (each field value a function of key
# and field name, YCSB's buildDeterministicValue), and saves each stored value
# byte for byte with `cairn kv get`. Usage (from the repository root, after
# make build): clients/java/ycsb/src/test/golden.sh [path/to/cairn]
set -euo pipefail
bin="${1:-bin/cairn}"
out="$(cd "$(dirname "$0")" && pwd)/resources/golden"
tmp=$(mktemp -d -t cairn-golden.XXXXXX)
pid=""
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid"; wait "$pid" || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

"$bin" lite --root "$tmp/store" --port 0 >"$tmp/lite.log" 2>&1 &
pid=$!
deadline=$((SECONDS + 30))
until addr=$(sed -n 's/.* ready at \(.*\)$/\1/p' "$tmp/lite.log") && [ -n "$addr" ]; do
  kill -0 "$pid" 2>/dev/null || { echo "cairn lite exited:" >&2; cat "$tmp/lite.log" >&2; exit 1; }
  [ $SECONDS -lt $deadline ] || { echo "cairn lite not ready in 30s:" >&2; cat "$tmp/lite.log" >&2; exit 1; }
  sleep 0.05
done

mkdir -p "$out"
rm -f "$out"/*.bin
: >"$out/records.txt.new"
# name table fieldcount fieldlength: YCSB's default record, and one whose
# values need two-byte length uvarints.
while read -r name table fc fl; do
  "$bin" bench load -db cairn -P workloads/workloada -p cairn.hosts="$addr" -p recordcount=2 \
    -p insertorder=ordered -p dataintegrity=true -p table="$table" -p fieldcount="$fc" \
    -p fieldlength="$fl" -threads 1 >/dev/null
  for key in user0 user1; do
    "$bin" kv --hosts "$addr" get "/$table/$key" >"$out/$name-$key.bin"
    echo "$name-$key.bin $table $key $fc $fl" >>"$out/records.txt.new"
  done
done <<'LIST'
default usertable 10 100
wide wide 3 200
LIST
{
  echo "# file table key fieldcount fieldlength; written by ../../golden.sh from $("$bin" version 2>/dev/null || echo cairn)"
  cat "$out/records.txt.new"
} >"$out/records.txt"
rm "$out/records.txt.new"
ls -l "$out"
