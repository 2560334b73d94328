#!/usr/bin/env python3
"""A trace-event loader in the spirit of the CERN comparison of Oracle NoSQL,
MongoDB and Cassandra: THREADS threads insert trace events of VALUE_BYTES
(1 KB) into a Cairn store for SECONDS, BATCH events per insert (the CERN
bulk loads used 20), and the rate is printed every second as it runs.

Each insert writes BATCH events under one major path, /trace/RUN/THREAD/N,
with one minor key per event, atomically (one execute). With --batch 1
every event is its own put.

    pip install ./clients/python
    python3 examples/tracer/tracer.py --hosts 127.0.0.1:5000 --seconds 30

For scale, the CERN test's Python clients inserted 546 (Oracle NoSQL), 1,560
(Cassandra) and 3,170 (MongoDB) rows/s.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
import uuid

from cairn import CairnError, Client, Key, Op


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--hosts", default="127.0.0.1:5000", help="comma-separated host:port of one or more nodes")
    p.add_argument("--store", default="kvstore", help="the store's name")
    p.add_argument("--threads", type=int, default=10, help="inserting threads")
    p.add_argument("--seconds", type=float, default=30, help="how long to insert")
    p.add_argument("--batch", type=int, default=20, help="events per insert, under one major path (1: one put per event)")
    p.add_argument("--value-bytes", type=int, default=1024, help="bytes per event")
    p.add_argument("--run", default=uuid.uuid4().hex[:8], help="the run's id: events go under /trace/RUN")
    a = p.parse_args(argv)
    for name in ("threads", "batch", "value_bytes"):
        if getattr(a, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if a.seconds <= 0:
        p.error("--seconds must be positive")
    return a


class Counter:
    """Events inserted and failed, shared by the threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.events = 0
        self.failed = 0

    def add(self, events: int, failed: int) -> None:
        with self.lock:
            self.events += events
            self.failed += failed


def insert(c: Client, a: argparse.Namespace, thread: int, stop: threading.Event, n: Counter) -> None:
    block = 0
    while not stop.is_set():
        major = ["trace", a.run, f"t{thread:02d}", f"{block:08d}"]
        ops = [Op.put(Key(major, [f"e{i:03d}"]), os.urandom(a.value_bytes)) for i in range(a.batch)]
        try:
            if a.batch == 1:
                c.put(ops[0].key, ops[0].value)
            else:
                c.execute(ops)
            n.add(a.batch, 0)
        except CairnError as e:
            n.add(0, a.batch)
            print(f"thread {thread}: {e}", file=sys.stderr)
        block += 1


def main(argv: list[str]) -> int:
    a = parse_args(argv)
    c = Client(a.hosts.split(","), store=a.store)
    n, stop = Counter(), threading.Event()
    threads = [threading.Thread(target=insert, args=(c, a, t, stop, n), daemon=True) for t in range(a.threads)]
    print(f"run {a.run}: {a.threads} threads, {a.batch} events of {a.value_bytes} bytes per insert, {a.seconds:g} s", flush=True)
    start = time.monotonic()
    for t in threads:
        t.start()
    last, last_events = start, 0
    while (now := time.monotonic()) - start < a.seconds:
        time.sleep(min(1.0, a.seconds - (now - start)))
        now = time.monotonic()
        with n.lock:
            events, failed = n.events, n.failed
        print(f"{now - start:6.1f} s  {events:9d} events  {(events - last_events) / (now - last):8.0f} events/s  {failed} failed", flush=True)
        last, last_events = now, events
    stop.set()
    for t in threads:
        t.join()
    took = time.monotonic() - start
    print(f"done: {n.events} events in {took:.1f} s, {n.events / took:.0f} events/s, {n.failed} failed", flush=True)
    c.close()
    return 1 if n.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
