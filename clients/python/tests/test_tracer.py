"""examples/tracer/tracer.py against a real cairn lite: it runs for its
time, prints a rate line each second, and every event it counted is in the
store under /trace/RUN."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from cairn import Client, Key

TRACER = os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples", "tracer", "tracer.py")


def test_tracer_inserts_what_it_counts(lite, client: Client) -> None:
    run = "pytest" + os.urandom(3).hex()
    out = subprocess.run([sys.executable, TRACER, "--hosts", lite.addr, "--threads", "4", "--seconds", "2",
                          "--batch", "20", "--run", run], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    assert len(re.findall(r"events/s", out.stdout)) >= 2, out.stdout
    m = re.search(r"done: (\d+) events in [\d.]+ s, (\d+) events/s, 0 failed", out.stdout)
    assert m, out.stdout
    counted = int(m.group(1))
    stored = sum(1 for _ in client.store_iterator(Key(["trace", run]), keys_only=True))
    assert counted > 0 and stored == counted, f"the tracer counted {counted} events, the store holds {stored}"


def test_tracer_refuses_bad_arguments() -> None:
    out = subprocess.run([sys.executable, TRACER, "--threads", "0"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 2 and "--threads must be at least 1" in out.stderr, out.stderr
