"""put_many against a scripted gRPC server (this test's fake, not a store):
a record refused for a reason that passes, certainly not applied, is sent
again; one whose outcome is unknown, or that the server refused for good,
keeps its error."""

import threading
import time
from concurrent import futures

import grpc

from cairn import CairnError, Client, Key, Version
from cairn._pb import kv_pb2 as pb
from cairn._pb import kv_pb2_grpc as pbgrpc
from conftest import STORE

D = pb.ErrorDetail


class Scripted(pbgrpc.KVServicer):
    def __init__(self, refusals):
        self.refusals = refusals  # key's major path -> list of ErrorDetail, then success
        self.sent = []            # each request's keys, in order
        self.lock = threading.Lock()

    def StoreInfo(self, request, context):
        return pb.StoreInfoResponse(store=STORE, partitions=4, version="fake",
                                    limits=pb.Limits(max_key_bytes=10 << 10, max_value_bytes=4 << 20,
                                                     max_components=64, max_put_many_records=100))

    def PutMany(self, request, context):
        with self.lock:
            resp = pb.PutManyResponse()
            keys = []
            for op in request.ops:
                k = "/".join(op.key.major)
                keys.append(k)
                q = self.refusals.get(k)
                if q:
                    d = q.pop(0)
                    resp.results.add(error_code=grpc.StatusCode.UNAVAILABLE.value[0], error_message=d.kind, detail=d)
                else:
                    resp.results.add(result=pb.OperationResult(success=True, new_version=k.encode()))
            self.sent.append(keys)
            return resp


def test_put_many_resends_what_passes_to_a_server():
    retry = D.ACTION_RETRY
    kv = Scripted({
        "dropped": [D(kind="dropped", action=retry)],
        "moving": [D(kind="partition_moving", action=retry), D(kind="partition_moving", action=retry)],
        "moved": [D(kind="wrong_shard", action=D.ACTION_REFRESH)],
        "unknown": [D(kind="outcome_unknown", action=D.ACTION_NONE, maybe_applied=True)],
        "timeout": [D(kind="ack_timeout", action=retry, maybe_applied=True)],
        "big": [D(kind="limit_exceeded", action=D.ACTION_FIX_INPUT)],
    })
    srv = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    pbgrpc.add_KVServicer_to_server(kv, srv)
    port = srv.add_insecure_port("127.0.0.1:0")
    srv.start()
    names = ["ok", "dropped", "moving", "moved", "unknown", "timeout", "big"]
    try:
        c = Client([f"127.0.0.1:{port}"], store=STORE, timeout=10)
        try:
            res = c.put_many([(Key([n]), b"v") for n in names], max_in_flight=1)
        finally:
            c.close()
    finally:
        srv.stop(None)
    failed = {"unknown": "outcome_unknown", "timeout": "ack_timeout", "big": "limit_exceeded"}
    for n, r in zip(names, res):
        if n in failed:
            assert isinstance(r, CairnError) and r.kind == failed[n], (n, r)
        else:
            assert isinstance(r, Version) and bytes(r) == n.encode(), (n, r)
    assert kv.sent == [names, ["dropped", "moving", "moved"], ["moving"]]


class Stalling(Scripted):
    """Refuses "slow" as dropped at once, then again after a delay, then
    holds the third request until released."""

    def __init__(self, delay):
        super().__init__({})
        self.delay = delay
        self.release = threading.Event()

    def PutMany(self, request, context):
        with self.lock:
            self.sent.append(["/".join(op.key.major) for op in request.ops])
            n = len(self.sent)
        if n == 2:
            self.release.wait(self.delay)
        elif n >= 3:
            self.release.wait(60)
        resp = pb.PutManyResponse()
        resp.results.add(error_code=grpc.StatusCode.UNAVAILABLE.value[0], error_message="dropped",
                         detail=D(kind="dropped", action=D.ACTION_RETRY))
        return resp


def test_put_many_resends_end_within_the_timeout():
    # The resend deadline is the first round's end plus the timeout (2 s).
    # The second round answers after 1.6 s; the third would wait its own
    # whole timeout (ending near 3.6 s) if a resend were not bounded by what
    # is left of the deadline (ending near 2 s).
    kv = Stalling(delay=1.6)
    srv = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    pbgrpc.add_KVServicer_to_server(kv, srv)
    port = srv.add_insecure_port("127.0.0.1:0")
    srv.start()
    try:
        c = Client([f"127.0.0.1:{port}"], store=STORE, timeout=2)
        try:
            start = time.monotonic()
            res = c.put_many([(Key(["slow"]), b"v")], max_in_flight=1)
            took = time.monotonic() - start
        finally:
            c.close()
    finally:
        kv.release.set()
        srv.stop(None)
    assert len(kv.sent) == 3, kv.sent
    assert isinstance(res[0], CairnError), res
    assert took < 2.8, f"put_many took {took:.2f} s with a 2 s timeout"
