"""A login to a secure store (docs/design/20261127_security.md §4): the
session token every call carries as "authorization: Bearer TOKEN", renewed
in the background at two thirds of its lifetime (and made again by a new
login if a renewal is refused)."""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Optional

import grpc

from ._pb import kv_pb2 as pb
from ._pb import kv_pb2_grpc as pbgrpc


class Session(grpc.AuthMetadataPlugin):
    def __init__(self, user: str, password: str) -> None:
        self.user = user
        self._password = password
        self._mu = threading.Lock()
        self._token = ""
        self._issued = 0.0
        self._expires = 0.0
        self._stub: Any = None
        self._timer: Optional[threading.Timer] = None
        self._closed = False

    # grpc.AuthMetadataPlugin
    def __call__(self, context: grpc.AuthMetadataContext, callback: grpc.AuthMetadataPluginCallback) -> None:
        with self._mu:
            tok = self._token
        callback((("authorization", "Bearer " + tok),) if tok else (), None)

    def login(self, channel: grpc.Channel, timeout: float) -> None:
        """Logs in through channel; raises grpc.RpcError when refused."""
        stub = pbgrpc.AuthStub(channel)
        r = stub.Login(pb.LoginRequest(user=self.user, password=self._password), timeout=timeout)
        self._set(r.token, r.expires_at_ms, stub)

    def _set(self, token: str, expires_ms: int, stub: Any) -> None:
        with self._mu:
            if self._closed:
                return
            self._token, self._issued, self._expires, self._stub = token, time.time(), expires_ms / 1000.0, stub
            wait = max(0.1, (self._expires - self._issued) * 2 / 3)
            if self._timer is not None:
                self._timer.cancel()
            self._timer = threading.Timer(wait, self._renew)
            self._timer.daemon = True
            self._timer.start()

    def _renew(self) -> None:
        with self._mu:
            tok, stub = self._token, self._stub
        tries: list[Callable[[], Any]] = [
            lambda: stub.Renew(pb.RenewRequest(token=tok), timeout=5.0),
            lambda: stub.Login(pb.LoginRequest(user=self.user, password=self._password), timeout=5.0),
        ]
        for attempt in tries:
            try:
                r = attempt()
            except grpc.RpcError:
                continue
            self._set(r.token, r.expires_at_ms, stub)
            return
        # Both refused: calls fail with the node's reason; try again later.
        with self._mu:
            if not self._closed:
                self._timer = threading.Timer(1.0, self._renew)
                self._timer.daemon = True
                self._timer.start()

    def close(self) -> None:
        with self._mu:
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
