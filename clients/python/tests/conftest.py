"""Fixtures that run real Cairn processes from the binary in $CAIRN_BIN: a
``cairn lite`` per session and a 3-node ``cairn cluster`` per module that
asks for it. Nothing is mocked across processes."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass
from typing import Dict, Iterator, List

import pytest

from cairn import Client

STORE = "kvstore"


@pytest.fixture(scope="session")
def cairn_bin() -> str:
    b = os.environ.get("CAIRN_BIN")
    if not b:
        pytest.fail("CAIRN_BIN is not set: build the binary (make build) and run with "
                    "CAIRN_BIN=$PWD/bin/cairn, or run make test-python", pytrace=False)
    if not os.access(b, os.X_OK):
        pytest.fail(f"CAIRN_BIN={b} is not an executable file", pytrace=False)
    return b


@dataclass
class Lite:
    addr: str
    root: str
    proc: subprocess.Popen


def start_lite(cairn_bin: str, root: str, *extra: str) -> Lite:
    proc = subprocess.Popen([cairn_bin, "lite", "--root", root, "--port", "0", "--partitions", "10", *extra],
                            stdout=subprocess.PIPE, stderr=open(os.path.join(root, "lite.log"), "w"), text=True)
    assert proc.stdout is not None
    # "cairn lite: store ... ready at HOST:PORT" (after a "secure mode" line
    # with --secure), or "" if it died.
    line = proc.stdout.readline()
    while line and "ready at" not in line:
        line = proc.stdout.readline()
    m = re.search(r"ready at (\S+)", line)
    if not m:
        proc.kill()
        proc.wait()
        with open(os.path.join(root, "lite.log")) as f:
            raise RuntimeError(f"cairn lite did not start: {line!r}\n{f.read()}")
    return Lite(m.group(1), root, proc)


def stop_lite(lite: Lite) -> None:
    lite.proc.send_signal(signal.SIGTERM)
    try:
        lite.proc.wait(10)
    except subprocess.TimeoutExpired:
        lite.proc.kill()
        lite.proc.wait()


@pytest.fixture(scope="session")
def lite(cairn_bin: str) -> Iterator[Lite]:
    # A small value limit so that the limit test sends a small request.
    root = tempfile.mkdtemp(prefix="cairn-py-lite-")
    lt = start_lite(cairn_bin, root, "--max-value-bytes", "65536")
    yield lt
    stop_lite(lt)
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def client(lite: Lite) -> Iterator[Client]:
    c = Client([lite.addr], store=STORE)
    yield c
    c.close()


@pytest.fixture
def ns() -> str:
    """A major-path component no other test uses."""
    return "t" + uuid.uuid4().hex[:12]


@dataclass
class Cluster:
    bin: str
    root: str
    nodes: Dict[int, str]  # node id -> address

    @property
    def hosts(self) -> List[str]:
        return [self.nodes[i] for i in sorted(self.nodes)]

    def run(self, *args: str) -> str:
        out = subprocess.run([self.bin, "cluster", *args, "--root", self.root], capture_output=True, text=True,
                             timeout=60)
        if out.returncode != 0:
            raise RuntimeError(f"cairn cluster {' '.join(args)}: exit {out.returncode}\n{out.stdout}\n{out.stderr}")
        return out.stdout

    def kill(self, node: int) -> None:
        self.run("kill", "--node", str(node))

    def start(self, node: int) -> None:
        self.run("start", "--node", str(node))


@pytest.fixture(scope="module")
def cluster(cairn_bin: str) -> Iterator[Cluster]:
    root = os.path.join(tempfile.mkdtemp(prefix="cairn-py-cluster-"), "cl")
    cl = Cluster(cairn_bin, root, {})
    try:
        cl.run("start", "--nodes", "3", "--rf", "3", "--shards", "2", "--partitions", "100")
        with open(os.path.join(root, "cluster.json")) as f:
            cl.nodes = {n["id"]: n["addr"] for n in json.load(f)["nodes"]}
        yield cl
    finally:
        try:
            cl.run("stop")
        except Exception as e:  # leave the logs for a look
            print(f"cairn cluster stop: {e}")
        else:
            shutil.rmtree(os.path.dirname(root), ignore_errors=True)


def wait_for(cond, timeout: float = 10.0, what: str = "condition"):
    """Polls cond until it returns a true value (returned) or the deadline passes."""
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.02)
