"""Single-thread get and put through the client versus the raw generated
stubs, against the same server, in one run (issue 11's performance
section), and put_many's bulk rate.

    bin/cairn lite --root /tmp/cairn-bench --port 5000 &
    .venv-python/bin/python clients/python/bench/ops.py --host 127.0.0.1:5000 --seconds 5

The two sides alternate (raw, client, raw, client...) so that a drift of
the machine shows in both.
"""

from __future__ import annotations

import argparse
import os
import time

import grpc

from cairn import Client, Key
from cairn._pb import kv_pb2 as pb
from cairn._pb import kv_pb2_grpc as pbgrpc


def rate(fn, seconds: float) -> float:
    n = 0
    end = time.perf_counter() + seconds
    t0 = time.perf_counter()
    while True:
        for _ in range(100):
            fn(n)
            n += 1
        if time.perf_counter() >= end:
            return n / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1:5000")
    ap.add_argument("--store", default="kvstore")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--value-bytes", type=int, default=1024)
    ap.add_argument("--put-many", type=int, default=100000, help="records for the put_many run (0: skip)")
    ap.add_argument("--per-major", type=int, default=20, help="put_many records per major path")
    ap.add_argument("--skip-ops", action="store_true", help="only the put_many run")
    a = ap.parse_args()
    value = os.urandom(a.value_bytes)
    keys = [Key(["bench", f"k{i:05d}"], ["v"]) for i in range(1000)]
    c = Client([a.host], store=a.store)
    ch = grpc.insecure_channel(a.host)
    stub = pbgrpc.KVStub(ch)
    pbkeys = [pb.Key(major=k.major, minor=k.minor) for k in keys]
    hdr = pb.RequestHeader(store=a.store, timeout_ms=5000)

    def raw_put(i: int) -> None:
        stub.Put(pb.PutRequest(header=hdr, op=pb.PutOp(key=pbkeys[i % 1000], value=value)), timeout=5)

    def raw_get(i: int) -> None:
        stub.Get(pb.GetRequest(header=hdr, key=pbkeys[i % 1000]), timeout=5)

    def cl_put(i: int) -> None:
        c.put(keys[i % 1000], value)

    def cl_get(i: int) -> None:
        c.get(keys[i % 1000])

    for i in range(1000):
        c.put(keys[i], value)
    rounds = 0 if a.skip_ops else a.rounds
    res = {"raw put": [], "client put": [], "raw get": [], "client get": []}
    for _ in range(rounds):
        res["raw put"].append(rate(raw_put, a.seconds))
        res["client put"].append(rate(cl_put, a.seconds))
        res["raw get"].append(rate(raw_get, a.seconds))
        res["client get"].append(rate(cl_get, a.seconds))
    for k, v in res.items() if rounds else ():
        print(f"{k:11s} {sum(v) / len(v):8.0f} ops/s  (rounds: {', '.join(f'{x:.0f}' for x in v)})")
    for op in ("put", "get") if rounds else ():
        r = sum(res["client " + op]) / sum(res["raw " + op])
        print(f"client/raw {op}: {100 * r:.0f} %")
    if a.put_many:
        pm = max(a.per_major, 1)
        recs = [(Key(["bulk", f"m{i // pm:07d}"], [f"e{i % pm:03d}"]), value) for i in range(a.put_many)]
        t0 = time.perf_counter()
        out = c.put_many(recs, max_in_flight=10)
        dt = time.perf_counter() - t0
        errs = sum(1 for r in out if isinstance(r, Exception))
        print(f"put_many: {a.put_many} records of {a.value_bytes} B, {pm} per major path, 10 in flight: "
              f"{a.put_many / dt:.0f} records/s ({errs} errors)")
    c.close()
    ch.close()


if __name__ == "__main__":
    main()
