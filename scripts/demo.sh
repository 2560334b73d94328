#!/usr/bin/env bash
# make demo: start `cairn lite` in a temp dir, write and read records with the
# CLI, then stop it cleanly. Usage: scripts/demo.sh path/to/cairn
set -euo pipefail
bin="${1:-bin/cairn}"
root=$(mktemp -d -t cairn-demo.XXXXXX)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
hosts="127.0.0.1:$port"
log="$root/lite.log"
pid=""
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid"; wait "$pid" || true; fi
  rm -rf "$root"
}
trap cleanup EXIT

step() {
  local shown="$*"; shown="${shown/#kv /cairn kv }"; shown="${shown/#$bin /cairn }"
  printf '\n$ %s\n' "$shown"; "$@"
}

echo "== starting cairn lite in $root"
"$bin" lite --root "$root/store" --port "$port" --store kvstore --partitions 10 >"$log" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q "ready at" "$log" 2>/dev/null && break; sleep 0.05; done
grep "ready at" "$log" || { echo "lite did not start:"; cat "$log"; exit 1; }

kv() { "$bin" kv --hosts "$hosts" --store kvstore "$@"; }
step kv put /users/alice/-/email alice@example.com
step kv put /users/alice/-/phone/home 555-0100
step kv put /users/alice/-/phone/work 555-0199
step kv put /users/bob/-/email bob@example.com --durability sync
step kv get /users/alice/-/email
step kv multi-get /users/alice
step kv put /users/alice/-/email alice@new.example.com --if-absent || echo "(exit $?: not done, the key exists)"
step kv scan
step kv count /users
step kv delete /users/bob/-/email
step kv get /users/bob/-/email || echo "(exit $?: not found)"

if command -v curl >/dev/null; then
  echo; echo "== the same port speaks HTTP/JSON"
  step curl -s -X PUT --data-binary carol@example.com "http://$hosts/v1/kv/users/carol/-/email"
  step curl -s "http://$hosts/v1/kv/users/alice/-/email"
fi

if "$bin" bench --help >/dev/null 2>&1; then
  echo; echo "== a short YCSB workload A"
  step "$bin" bench load -db cairn -P workloads/workloada -p cairn.hosts="$hosts" -p recordcount=1000 -threads 4
  step "$bin" bench run -db cairn -P workloads/workloada -p cairn.hosts="$hosts" -p recordcount=1000 -p operationcount=5000 -threads 4
fi

echo; echo "== stopping cairn lite (SIGTERM)"
kill -TERM "$pid"; wait "$pid"; pid=""
tail -1 "$log"
