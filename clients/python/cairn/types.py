"""Durability, consistency, records, results and execute's operations."""

from __future__ import annotations

import dataclasses
import datetime
import enum
from dataclasses import dataclass, field
from typing import Any, ClassVar, Optional, Tuple

from ._pb import kv_pb2 as pb
from .keys import Key, Version

__all__ = ["SyncPolicy", "AckPolicy", "Durability", "Consistency", "ReturnChoice", "Record", "Result",
           "Limits", "StoreInfo", "Op"]


class SyncPolicy(enum.IntEnum):
    """What a node does with a write before acknowledging it."""

    SYNC = 1           # fsync before the ack: survives power loss
    WRITE_NO_SYNC = 2  # written to the OS: survives a process crash
    NO_SYNC = 3        # may stay buffered in the process


class AckPolicy(enum.IntEnum):
    """How many replicas must hold a write before the ack."""

    ALL = 1
    SIMPLE_MAJORITY = 2
    NONE = 3


@dataclass(frozen=True)
class Durability:
    """A write's durability; None fields take the server default
    (WRITE_NO_SYNC on the leader, NO_SYNC on replicas, SIMPLE_MAJORITY)."""

    master_sync: Optional[SyncPolicy] = None
    replica_sync: Optional[SyncPolicy] = None
    replica_ack: Optional[AckPolicy] = None

    def _pb(self) -> pb.Durability:
        return pb.Durability(master_sync=_enum(self.master_sync), replica_sync=_enum(self.replica_sync),
                             replica_ack=_enum(self.replica_ack))


Durability.COMMIT_SYNC = Durability(SyncPolicy.SYNC, SyncPolicy.NO_SYNC, AckPolicy.SIMPLE_MAJORITY)  # type: ignore[attr-defined]
Durability.COMMIT_NO_SYNC = Durability(SyncPolicy.NO_SYNC, SyncPolicy.NO_SYNC, AckPolicy.SIMPLE_MAJORITY)  # type: ignore[attr-defined]
Durability.COMMIT_WRITE_NO_SYNC = Durability(SyncPolicy.WRITE_NO_SYNC, SyncPolicy.NO_SYNC, AckPolicy.SIMPLE_MAJORITY)  # type: ignore[attr-defined]


# Wire numbers of kv.proto's enums. The client names them itself, so that
# renaming the generated enum values (the planned type prefixes, design §6)
# changes no line here: the numbers are the contract.
_IF_ABSENT, _IF_PRESENT, _IF_VERSION = 1, 2, 3  # Condition
_ABSOLUTE, _NONE_REQUIRED, _TIME_LAG, _VERSION = 1, 2, 3, 4  # ConsistencyKind
_CONSISTENCY_NAMES = {0: "DEFAULT", 1: "ABSOLUTE", 2: "NONE_REQUIRED", 3: "TIME_LAG", 4: "VERSION"}


def _enum(v: Optional[int]) -> Any:
    """An enum's wire number (0: unset), typed for the generated stubs,
    which take ints at run time."""
    return int(v or 0)


def _ms(d: Optional[datetime.timedelta]) -> int:
    if not d:
        return 0
    us = d // datetime.timedelta(microseconds=1)
    if us < 0:
        return min(-((-us) // 1000), -1)
    return (us + 999) // 1000  # rounded up, as the Go client does


@dataclass(frozen=True)
class Consistency:
    """Which replica may serve a read, and how fresh it must be.

    ``Consistency.ABSOLUTE`` reads from the shard leader (linearizable);
    ``Consistency.NONE_REQUIRED`` (the default) from any replica;
    ``Consistency.time_lag(lag, timeout)`` from a replica within ``lag`` of
    the leader; ``Consistency.version(v, timeout)`` from a replica that has
    applied version v (read your writes).
    """

    kind: int
    lag: Optional[datetime.timedelta] = None
    timeout: Optional[datetime.timedelta] = None
    at_version: Optional[bytes] = None

    ABSOLUTE: ClassVar["Consistency"]  # set below the class
    NONE_REQUIRED: ClassVar["Consistency"]

    @staticmethod
    def time_lag(lag: datetime.timedelta, timeout: Optional[datetime.timedelta] = None) -> "Consistency":
        return Consistency(_TIME_LAG, lag=lag, timeout=timeout)

    @staticmethod
    def version(v: bytes, timeout: Optional[datetime.timedelta] = None) -> "Consistency":
        return Consistency(_VERSION, timeout=timeout, at_version=bytes(v))

    def __repr__(self) -> str:
        name = _CONSISTENCY_NAMES.get(self.kind, str(self.kind))
        if self.kind == _TIME_LAG:
            return f"Consistency.time_lag({self.lag!r}, {self.timeout!r})"
        if self.kind == _VERSION:
            return f"Consistency.version({Version(self.at_version or b'')!r}, {self.timeout!r})"
        return f"Consistency.{name}"

    def _pb(self) -> pb.Consistency:
        return pb.Consistency(kind=_enum(self.kind), permissible_lag_ms=_ms(self.lag), version=self.at_version or b"",
                              timeout_ms=_ms(self.timeout))


Consistency.ABSOLUTE = Consistency(_ABSOLUTE)
Consistency.NONE_REQUIRED = Consistency(_NONE_REQUIRED)


class ReturnChoice(enum.IntEnum):
    """What a write returns about the record before it (Result.previous)."""

    NONE = 1
    VALUE = 2
    VERSION = 3
    ALL = 4


def _time(ms: int) -> Optional[datetime.datetime]:
    if ms == 0:
        return None
    return datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.timezone.utc)


@dataclass(frozen=True)
class Record:
    """A stored record. ``value`` is None for keys-only reads; ``expiration``
    is None for a record that never expires."""

    key: Key
    value: Optional[bytes]
    version: Version
    expiration: Optional[datetime.datetime] = None

    @staticmethod
    def _from_pb(p: pb.Record, keys_only: bool = False) -> "Record":
        return Record(Key(p.key.major, p.key.minor), None if keys_only else p.value, Version(p.version),
                      _time(p.expiration_ms))


@dataclass(frozen=True)
class Result:
    """The outcome of a conditional write or a delete: ``done`` says whether
    it happened (its condition held; for a delete, a record existed).
    ``version`` is a done put's new version. ``previous`` is the record
    before the write, with the parts the return choice asked for (None
    unless something was asked for and a record existed)."""

    done: bool
    version: Optional[Version] = None
    previous: Optional[Record] = None

    def __bool__(self) -> bool:
        return self.done

    @staticmethod
    def _from_pb(k: Key, p: pb.OperationResult) -> "Result":
        prev = None
        if p.previous_exists:
            prev = Record(k, p.previous_value, Version(p.previous_version), _time(p.previous_expiration_ms))
        return Result(p.success, Version(p.new_version) if p.new_version else None, prev)


@dataclass(frozen=True)
class Limits:
    """The server's size limits (StoreInfo)."""

    max_key_bytes: int
    max_value_bytes: int
    max_components: int
    max_timeout: datetime.timedelta
    max_result_bytes: int
    max_put_many_records: int = 0  # records in one PutMany request (put_many's batches)


@dataclass(frozen=True)
class StoreInfo:
    """What a node says about the store."""

    store: str
    partitions: int
    server_version: str
    topology_seq: int
    limits: Limits
    node: int
    replicated: bool  # False for cairn lite


@dataclass(frozen=True)
class Op:
    """One operation of an atomic ``execute`` batch; every op of a batch
    has the same major path. Build with the class methods, then chain::

        Op.put(k, b"v").abort_if_unsuccessful().with_ttl(timedelta(hours=1))
    """

    key: Key
    value: Optional[bytes] = None
    is_delete: bool = False
    condition: int = 0
    match_version: bytes = b""
    abort: bool = False
    ret: Optional[ReturnChoice] = None
    ttl: Optional[datetime.timedelta] = None

    @classmethod
    def put(cls, key: Key, value: bytes) -> "Op":
        return cls(key, bytes(value))

    @classmethod
    def put_if_absent(cls, key: Key, value: bytes) -> "Op":
        return cls(key, bytes(value), condition=_IF_ABSENT)

    @classmethod
    def put_if_present(cls, key: Key, value: bytes) -> "Op":
        return cls(key, bytes(value), condition=_IF_PRESENT)

    @classmethod
    def put_if_version(cls, key: Key, value: bytes, match: bytes) -> "Op":
        return cls(key, bytes(value), condition=_IF_VERSION, match_version=bytes(match))

    @classmethod
    def delete(cls, key: Key) -> "Op":
        return cls(key, is_delete=True)

    @classmethod
    def delete_if_version(cls, key: Key, match: bytes) -> "Op":
        return cls(key, is_delete=True, condition=_IF_VERSION, match_version=bytes(match))

    def abort_if_unsuccessful(self) -> "Op":
        """If this op is not done, nothing in the batch is written and
        execute raises ExecutionAborted."""
        return dataclasses.replace(self, abort=True)

    def returning(self, choice: ReturnChoice) -> "Op":
        return dataclasses.replace(self, ret=choice)

    def with_ttl(self, ttl: datetime.timedelta) -> "Op":
        return dataclasses.replace(self, ttl=ttl)

    def _pb(self, ret: Optional[ReturnChoice], ttl: Optional[datetime.timedelta]) -> pb.Operation:
        r = int(self.ret if self.ret is not None else (ret or 0))
        k = pb.Key(major=self.key.major, minor=self.key.minor)  # client.execute checked UTF-8
        if self.is_delete:
            return pb.Operation(delete=pb.DeleteOp(key=k, condition=_enum(self.condition),
                                                   match_version=self.match_version, **{"return": r}),
                                abort_if_unsuccessful=self.abort)
        t = self.ttl if self.ttl is not None else ttl
        put = pb.PutOp(key=k, value=self.value or b"", condition=_enum(self.condition),
                       match_version=self.match_version, ttl_ms=_ms(t))
        setattr(put, "return", r)
        return pb.Operation(put=put, abort_if_unsuccessful=self.abort)

