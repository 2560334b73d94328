"""Typed exceptions. Every operation raises a CairnError (or a subclass).

Each error says what to do about it: ``action`` (RETRY, REFRESH,
FIX_INPUT, NONE), ``retryable`` (the same request may succeed later and
certainly was not applied), and ``maybe_applied`` (a write whose outcome is
unknown: the client did not retry it; read the record to find out).

A conditional write whose condition does not hold is not an error: it
returns a Result with ``done`` False.
"""

from __future__ import annotations

from typing import Any, Optional

import grpc

__all__ = [
    "CairnError", "InvalidArgument", "LimitExceeded", "Unavailable", "Timeout",
    "ConsistencyTimeout", "DiskFull", "StoreMismatch", "MaybeApplied", "ExecutionAborted",
]

_ACTIONS = {0: "UNSPECIFIED", 1: "RETRY", 2: "REFRESH", 3: "FIX_INPUT", 4: "NONE"}


class CairnError(Exception):
    """An operation's failure, as reported by the server, or by the client
    for a connection failure or input it refuses before sending.

    Attributes:
        code: the gRPC status code (grpc.StatusCode).
        kind: stable machine name, e.g. "limit_exceeded"; "" if none was sent.
        action: "RETRY", "REFRESH", "FIX_INPUT", "NONE" or "UNSPECIFIED".
        retryable: the same request may succeed later, and was certainly not applied.
        maybe_applied: a write whose outcome is unknown (never retried by the client).
        limit, max, seen: for limit errors, the limit's name and the sizes.
        shard: set when no replica of this shard could serve the operation.
    """

    def __init__(self, message: str, *, code: grpc.StatusCode = grpc.StatusCode.UNKNOWN, kind: str = "",
                 action: str = "NONE", maybe_applied: bool = False, limit: str = "", max: int = 0,
                 seen: int = 0, shard: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.kind = kind
        self.action = action
        self.maybe_applied = maybe_applied
        self.limit = limit
        self.max = max
        self.seen = seen
        self.shard = shard
        # Routing hints of a replicated store (not_leader, wrong_shard).
        self.leader_node = 0
        self.moved_to_shard = 0
        self.partitions = 0
        self.no_answer = False

    @property
    def retryable(self) -> bool:
        if self.maybe_applied or self.code in (grpc.StatusCode.CANCELLED, grpc.StatusCode.DEADLINE_EXCEEDED):
            return False
        if self.kind in ("consistency_timeout", "disk_full"):
            return False
        return self.action in ("RETRY", "REFRESH") or (self.code == grpc.StatusCode.UNAVAILABLE and not self.kind)

    def __str__(self) -> str:
        parts = [self.code.name if isinstance(self.code, grpc.StatusCode) else str(self.code)]
        if self.kind:
            parts.append("kind " + self.kind)
        if self.limit:
            parts.append(f"limit {self.limit} max {self.max} seen {self.seen}")
        if self.action:
            parts.append("action " + self.action)
        s = f"cairn: {self.message} ({', '.join(parts)})"
        if self.maybe_applied:
            s += "; the write may have been applied"
        return s

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, code={self.code}, kind={self.kind!r}, action={self.action!r})"


class InvalidArgument(CairnError):
    """The request is wrong (malformed key, bad range...): do not retry."""


class LimitExceeded(InvalidArgument):
    """A key or value is over a server limit; ``limit`` names it (e.g.
    "max_value_bytes"), ``max`` and ``seen`` give the sizes."""


class Unavailable(CairnError):
    """No node could be reached, or none could serve the request now."""


class Timeout(CairnError):
    """The operation's deadline passed."""


class ConsistencyTimeout(CairnError):
    """No replica could serve the read at the requested consistency in time."""


class DiskFull(CairnError):
    """A node refused a write for lack of disk."""


class StoreMismatch(CairnError):
    """A node serves a store other than the client's."""


class MaybeApplied(CairnError):
    """A write whose outcome is unknown (``maybe_applied`` is True): it
    reached the server, or may have, and no answer came back. ``kind`` says
    more ("outcome_unknown", "ack_timeout", or "" for a broken connection)."""


class ExecutionAborted(CairnError):
    """execute(): the operation at ``index``, marked abort_if_unsuccessful,
    was not done; nothing in the batch was written. ``result`` is its
    Result."""

    def __init__(self, index: int, result: Any) -> None:
        super().__init__(f"execute: operation {index} was not done and aborted the batch; nothing was written",
                         code=grpc.StatusCode.OK, kind="execute_aborted", action="NONE")
        self.index = index
        self.result = result


def _class_for(code: grpc.StatusCode, kind: str, maybe_applied: bool) -> type:
    if maybe_applied:
        return MaybeApplied
    if kind == "limit_exceeded":
        return LimitExceeded
    if kind == "consistency_timeout":
        return ConsistencyTimeout
    if kind == "disk_full":
        return DiskFull
    if kind == "store_mismatch":
        return StoreMismatch
    if code == grpc.StatusCode.INVALID_ARGUMENT:
        return InvalidArgument
    if code == grpc.StatusCode.UNAVAILABLE:
        return Unavailable
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return Timeout
    return CairnError


def make_error(message: str, code: grpc.StatusCode, kind: str = "", action: str = "NONE",
               maybe_applied: bool = False, **kw: Any) -> CairnError:
    """The CairnError subclass that fits code, kind and maybe_applied."""
    return _class_for(code, kind, maybe_applied)(message, code=code, kind=kind, action=action,
                                                 maybe_applied=maybe_applied, **kw)


_MAYBE_APPLIED_CODES = {
    grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.CANCELLED,
    grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL, grpc.StatusCode.ABORTED, grpc.StatusCode.DATA_LOSS,
}

# gRPC fails an RPC with these words when no connection could be picked for
# it: the request never left the client.
_NOT_SENT_TEXT = ("failed to connect to all addresses", "no children to pick from", "Connection refused")


def from_detail(msg: str, code: grpc.StatusCode, ed: Any) -> CairnError:
    """The CairnError a status with this ErrorDetail means."""
    e = make_error(msg, code, kind=ed.kind, action=_ACTIONS.get(ed.action, "NONE"),
                   maybe_applied=ed.maybe_applied, limit=ed.limit, max=ed.max, seen=ed.seen)
    e.leader_node = ed.leader_node
    e.moved_to_shard = ed.moved_to_shard
    e.partitions = ed.partitions
    return e


def from_rpc_error(err: grpc.RpcError, write: bool, sent: bool, detail_type: Any) -> CairnError:
    """Turns a gRPC error into a CairnError. ``write`` and ``sent`` (the
    request may have left the client) decide maybe_applied when the server
    attached no ErrorDetail, as the Go client's convertError does."""
    code = err.code() if hasattr(err, "code") else grpc.StatusCode.UNKNOWN
    msg = (err.details() if hasattr(err, "details") else str(err)) or ""
    ed = None
    trailers = err.trailing_metadata() if hasattr(err, "trailing_metadata") else None
    for k, v in trailers or ():
        if k == "grpc-status-details-bin":
            ed = _detail(v, detail_type)
            break
    if ed is not None:
        return from_detail(msg, code, ed)
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
        action = "RETRY"
    elif code == grpc.StatusCode.INVALID_ARGUMENT:
        action = "FIX_INPUT"
    else:
        action = "NONE"
    if sent and code == grpc.StatusCode.UNAVAILABLE and any(t in msg for t in _NOT_SENT_TEXT):
        sent = False
    return make_error(msg, code, action=action, maybe_applied=write and sent and code in _MAYBE_APPLIED_CODES)


def _detail(raw: bytes, detail_type: Any) -> Optional[Any]:
    # google.rpc.Status: code = 1, message = 2, details = 3 (repeated Any);
    # Any: type_url = 1, value = 2. Decoded by hand so that no
    # googleapis-common-protos dependency is needed.
    try:
        for field, val in _fields(raw):
            if field != 3:
                continue
            url, body = "", b""
            for f2, v2 in _fields(val):
                if f2 == 1:
                    url = v2.decode()
                elif f2 == 2:
                    body = v2
            if url.endswith("/cairn.v1.ErrorDetail"):
                d = detail_type()
                d.ParseFromString(body)
                return d
    except Exception:  # a malformed status: treat as no detail
        return None
    return None


def _varint(b: bytes, i: int) -> "tuple[int, int]":
    n = shift = 0
    while True:
        c = b[i]
        i += 1
        n |= (c & 0x7F) << shift
        if c < 0x80:
            return n, i
        shift += 7


def _fields(b: bytes):
    i = 0
    while i < len(b):
        tag, i = _varint(b, i)
        field, wt = tag >> 3, tag & 7
        if wt == 0:
            v, i = _varint(b, i)
            yield field, v
        elif wt == 2:
            n, i = _varint(b, i)
            yield field, b[i : i + n]
            i += n
        elif wt == 1:
            i += 8
        elif wt == 5:
            i += 4
        else:
            raise ValueError("bad wire type")
