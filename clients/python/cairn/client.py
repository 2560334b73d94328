"""The synchronous client. See the package doc (cairn/__init__.py)."""

from __future__ import annotations

import datetime
import itertools
import os
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import grpc

from ._pb import kv_pb2 as pb
from ._pb import kv_pb2_grpc as pbgrpc
from ._routing import Cluster, Topology, choose, read_order
from ._session import Session
from .errors import (CairnError, ExecutionAborted, InvalidArgument, StoreMismatch, Unavailable, from_detail,
                     from_rpc_error, make_error)
from .fields import Fields, encode_fields
from .keys import Depth, Direction, Key, KeyRange, Version
from .types import (_ABSOLUTE, _IF_ABSENT, _IF_PRESENT, _IF_VERSION, _NONE_REQUIRED, Consistency, Durability, Limits,
                    Op, Record, Result, ReturnChoice, StoreInfo, _enum, _ms)

__all__ = ["Client"]

Timeout = Union[float, datetime.timedelta, None]

_INITIAL_BACKOFF = 0.010
_MAX_BACKOFF = 0.500
_ATTEMPT_SHARE = 3
_REFRESH_ATTEMPT = 1.0
_MIN_REFRESH_INTERVAL = 0.050
DEFAULT_BATCH_SIZE = 100
_PUT_MANY_BATCH_BYTES = 4 << 20
_PUT_MANY_ROUNDS = 16  # a record refused for a reason that passes is sent at most this often


def _resendable(e: object) -> bool:
    """Certainly not applied, refused for a reason that passes (a routing
    error, a leader change, a partition moving): send the record again, as
    a single write would be retried."""
    return isinstance(e, CairnError) and _retryable(e, True)


_STATUS_CODES = {c.value[0]: c for c in grpc.StatusCode}


def _credentials(ca_file: Optional[str], session: Optional[Session]) -> Optional[grpc.ChannelCredentials]:
    """TLS credentials for a secure store, with the session's token on every
    call when there is a login."""
    if ca_file is None:
        return None
    try:
        with open(ca_file, "rb") as f:
            creds = grpc.ssl_channel_credentials(root_certificates=f.read())
    except OSError as e:
        raise InvalidArgument(f"config: the store CA {ca_file}: {e}", code=grpc.StatusCode.INVALID_ARGUMENT,
                              kind="invalid_config", action="FIX_INPUT") from None
    if session is None:
        return creds
    return grpc.composite_channel_credentials(creds, grpc.metadata_call_credentials(session))


def _read_login(path: str) -> Tuple[str, Optional[str], Optional[str]]:
    """The login file's CA, user and password (cairn.ssl.ca,
    cairn.auth.username, cairn.auth.password.file: as `cairn lite --secure`
    writes it; relative paths are read from the login file's directory)."""
    bad = lambda msg: InvalidArgument(f"login file {path}: {msg}", code=grpc.StatusCode.INVALID_ARGUMENT,  # noqa: E731
                                      kind="invalid_config", action="FIX_INPUT")
    ca, user, pw_file = _login_values(path)
    if ca is None:
        raise bad("cairn.ssl.ca (the store CA's ca.pem) is missing")
    if user is None:
        return ca, None, None
    if pw_file is None:
        raise bad(f"cairn.auth.username is {user!r} but cairn.auth.password.file is missing")
    try:
        with open(pw_file, encoding="utf-8") as f:
            pw = f.read().split("\n", 1)[0].rstrip("\r")
    except OSError as e:
        raise bad(f"the password file: {e}") from None
    return ca, user, pw


def _login_values(path: str) -> Tuple[Optional[str], Optional[str], Optional[str]]:
    bad = lambda msg: InvalidArgument(f"login file {path}: {msg}", code=grpc.StatusCode.INVALID_ARGUMENT,  # noqa: E731
                                      kind="invalid_config", action="FIX_INPUT")
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise bad(str(e)) from None
    found: Dict[str, str] = {}
    for n, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line[0] in "#!":
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise bad(f"line {n}: want key=value, got {line!r}")
        found[key.strip()] = value.strip()
    rel = lambda v: v if v is None or os.path.isabs(v) else os.path.join(os.path.dirname(path), v)  # noqa: E731
    return rel(found.get("cairn.ssl.ca")), found.get("cairn.auth.username"), rel(found.get("cairn.auth.password.file"))


def _record_error(r: Any) -> CairnError:
    """The CairnError of one PutMany record, as a single put of it would raise."""
    code = _STATUS_CODES.get(r.error_code, grpc.StatusCode.UNKNOWN)
    if r.HasField("detail"):
        return from_detail(r.error_message, code, r.detail)
    return make_error(r.error_message, code)

_GIVE_UP, _FOLLOW_LEADER, _TRY_ELSEWHERE, _OTHER_REPLICA, _REFRESH, _RETRY_LATER = range(6)
_READY = grpc.ChannelConnectivity.READY
_FAILED = (grpc.ChannelConnectivity.TRANSIENT_FAILURE, grpc.ChannelConnectivity.SHUTDOWN)


def _seconds(t: Timeout, default: float) -> float:
    if t is None:
        return default
    if isinstance(t, datetime.timedelta):
        return t.total_seconds()
    return float(t)


class _Conn:
    """One channel to one node address, with its connectivity state and a
    failure mark (client/pool.go). Each channel has its own subchannels
    (gRPC's global pool would share one connection's backoff among clients)
    and reconnects within a second of a node's return."""

    _OPTIONS = [
        ("grpc.enable_retries", 0),
        ("grpc.use_local_subchannel_pool", 1),
        ("grpc.initial_reconnect_backoff_ms", 100),
        ("grpc.min_reconnect_backoff_ms", 100),
        ("grpc.max_reconnect_backoff_ms", 1000),
        ("grpc.max_receive_message_length", 64 << 20),
        ("grpc.max_send_message_length", 64 << 20),
    ]

    def __init__(self, addr: str, creds: Optional[grpc.ChannelCredentials] = None) -> None:
        self.addr = addr
        if creds is None:
            self.channel = grpc.insecure_channel(addr, options=self._OPTIONS)
        else:
            self.channel = grpc.secure_channel(addr, creds, options=self._OPTIONS)
        self.stub = pbgrpc.KVStub(self.channel)
        self.state = grpc.ChannelConnectivity.IDLE
        self.failing_until = 0.0
        self._changed = threading.Condition()
        self.channel.subscribe(self._on_state, try_to_connect=True)

    def _on_state(self, s: grpc.ChannelConnectivity) -> None:
        with self._changed:
            self.state = s
            self._changed.notify_all()

    def wait_connecting(self, timeout: float) -> bool:
        """Waits up to timeout while the channel is connecting, so that a
        node whose host does not answer is left for another replica. False
        if it is still connecting then (the request was not sent). A ready,
        idle or failed channel returns at once: an RPC on it connects, or
        fails fast with gRPC's own error."""
        if self.state != grpc.ChannelConnectivity.CONNECTING:
            return True
        deadline = time.monotonic() + timeout
        with self._changed:
            while self.state == grpc.ChannelConnectivity.CONNECTING:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(left)
        return True

    def failing(self, now: float) -> bool:
        return now < self.failing_until

    def mark_failing(self) -> None:
        self.failing_until = time.monotonic() + 1.0

    def unsubscribe(self) -> None:
        try:
            self.channel.unsubscribe(self._on_state)
        except Exception:
            pass

    def close(self) -> None:
        """Closes the channel once grpcio's connectivity poller has seen the
        unsubscription (it wakes every 0.2 s): closing under it makes the
        poller thread raise "Cannot monitor channel state: Channel closed!"
        (grpc/grpc#18995). Call unsubscribe first."""
        state = getattr(self.channel, "_connectivity_state", None)
        deadline = time.monotonic() + 0.5
        while getattr(state, "polling", False) and time.monotonic() < deadline:
            time.sleep(0.01)
        self.channel.close()


class _Route:
    __slots__ = ("major", "shard", "write", "leader", "bounded", "stick", "kind")

    def __init__(self, kind: str, major: Sequence[str] = (), shard: int = 0, write: bool = False,
                 leader: bool = False, bounded: bool = False) -> None:
        self.kind = kind  # "key", "shard" or "any"
        self.major = major
        self.shard = shard
        self.write = write
        self.leader = leader
        self.bounded = bounded
        self.stick = 0  # an iterator's replica: tried first, updated to the one that answered


def _bounded(c: Optional[Consistency]) -> bool:
    return c is None or c.kind in (_ABSOLUTE, _NONE_REQUIRED, 0)


def _retryable(e: CairnError, write: bool) -> bool:
    if e.code in (grpc.StatusCode.CANCELLED, grpc.StatusCode.DEADLINE_EXCEEDED):
        return False
    if e.kind in ("consistency_timeout", "disk_full"):
        return False
    again = e.action in ("RETRY", "REFRESH")
    if write:
        return again and not e.maybe_applied
    return again or e.code == grpc.StatusCode.UNAVAILABLE


def _classify(e: CairnError, write: bool) -> int:
    if e.code in (grpc.StatusCode.CANCELLED, grpc.StatusCode.DEADLINE_EXCEEDED):
        return _GIVE_UP
    if write and e.maybe_applied:
        return _GIVE_UP
    if e.kind == "not_leader":
        return _FOLLOW_LEADER
    if e.kind in ("wrong_shard", "stale_topology"):
        return _REFRESH
    if e.kind == "shutting_down" or (e.kind == "" and e.code == grpc.StatusCode.UNAVAILABLE):
        return _TRY_ELSEWHERE
    if e.kind == "rejoining":
        return _OTHER_REPLICA
    if _retryable(e, write):
        return _RETRY_LATER
    return _GIVE_UP


def _pbkey(k: Key, field: str = "key") -> pb.Key:
    if not isinstance(k, Key):
        raise TypeError(f"expected a cairn.Key, got {type(k).__name__} (use Key.parse)")
    try:
        return pb.Key(major=k.major, minor=k.minor)
    except (UnicodeEncodeError, ValueError):
        _check_utf8(k, field)  # names the component
        raise


def _pbrange(r: Optional[KeyRange]) -> Optional[pb.KeyRange]:
    if r is None:
        return None
    if r.prefix_ is not None:
        return pb.KeyRange(has_prefix=True, prefix=r.prefix_)
    return pb.KeyRange(has_start=r.start is not None, start=r.start or "", start_inclusive=r.start_inclusive,
                       has_end=r.end is not None, end=r.end or "", end_inclusive=r.end_inclusive)


def _check_utf8(k: Key, field: str) -> None:
    for name, comps in (("major", k.major), ("minor", k.minor)):
        for i, c in enumerate(comps):
            try:
                c.encode("utf-8")
            except UnicodeEncodeError:
                raise InvalidArgument(f"{field}: {name} component {i} is not valid UTF-8 ({c!r})",
                                      code=grpc.StatusCode.INVALID_ARGUMENT, kind="invalid_key",
                                      action="FIX_INPUT") from None


class Client:
    """A client of one Cairn store. Safe for use from many threads.

    ``hosts`` are "host:port" addresses of any nodes of the store (or of a
    ``cairn lite``). The client asks them for StoreInfo; a replicated store
    answers with its topology, and the client then routes each request to
    the shard that owns its key: writes and ABSOLUTE reads to the shard
    leader, other reads to the client's home replica of the shard (each
    client ranks the nodes its own random way, so clients spread over them),
    or round robin over the replicas with ``spread_reads=True``.

    ``timeout`` (seconds or timedelta, default 5 s) is each operation's
    default; every method takes ``timeout=`` too. ``durability`` and
    ``consistency`` are the defaults of writes and reads. For a secure
    store (TLS), give ``security``, the login file `cairn lite --secure`
    writes (ROOT/security/client.security: the store CA, a user and its
    password file), or ``ca_file`` (the store CA) with ``user`` and
    ``password``. The client logs in at once, sends the session token with
    every call and renews it before it expires.
    """

    def __init__(self, hosts: Sequence[str], store: str, *, timeout: Timeout = 5.0,
                 durability: Optional[Durability] = None, consistency: Optional[Consistency] = None,
                 connect_timeout: Timeout = 2.0, security: Optional[str] = None,
                 ca_file: Optional[str] = None, user: Optional[str] = None,
                 password: Optional[str] = None, spread_reads: bool = False) -> None:
        if isinstance(hosts, str):
            hosts = [hosts]
        if not hosts:
            raise InvalidArgument("config: no hosts", code=grpc.StatusCode.INVALID_ARGUMENT,
                                  kind="invalid_config", action="FIX_INPUT")
        if not store:
            raise InvalidArgument("config: no store name", code=grpc.StatusCode.INVALID_ARGUMENT,
                                  kind="invalid_config", action="FIX_INPUT")
        self.store = store
        self.timeout = _seconds(timeout, 5.0)
        self.connect_timeout = _seconds(connect_timeout, 2.0)
        self.durability = durability
        self.consistency = consistency
        self._hosts = list(hosts)
        self._session: Optional[Session] = None
        if security is not None:
            ca_file, user, password = _read_login(security)
        if user is not None:
            if ca_file is None:
                raise InvalidArgument("config: a login (user=) travels only over TLS: give ca_file= or security=",
                                      code=grpc.StatusCode.INVALID_ARGUMENT, kind="invalid_config", action="FIX_INPUT")
            self._session = Session(user, password or "")
        self._creds = _credentials(ca_file, self._session)
        self._mu = threading.Lock()
        self._conns: Dict[str, _Conn] = {}
        self._closed = False
        self._rr = itertools.count()
        self._spread_reads = spread_reads
        self._salt = random.getrandbits(64)  # this client's ranking of the nodes (read_order)
        self._helpers = [self._conn(h) for h in self._hosts]
        self._cluster: Optional[Cluster] = None
        self._put_many_limit = 0  # max_put_many_records, read once from StoreInfo
        try:
            if self._session is not None:
                self._login()
            resp = self._check_store()
            if resp.HasField("topology"):
                self._cluster = Cluster(resp)
        except BaseException:
            self.close()
            raise

    # -- connections -------------------------------------------------------

    def _conn(self, addr: str) -> _Conn:
        c = self._conns.get(addr)
        if c is not None:
            return c
        with self._mu:
            if self._closed:
                raise _closed_error()
            c = self._conns.get(addr)
            if c is None:
                c = self._conns[addr] = _Conn(addr, self._creds)
            return c

    def _login(self) -> None:
        """Logs in through the first helper host that answers."""
        assert self._session is not None
        last: Optional[grpc.RpcError] = None
        for c in self._helpers:
            try:
                self._session.login(c.channel, self.timeout)
                return
            except grpc.RpcError as e:
                last = e
                if e.code() in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
                    break  # the password is wrong everywhere
        assert last is not None
        raise from_rpc_error(last, False, False, pb.ErrorDetail)

    def close(self) -> None:
        """Closes every connection. Idempotent."""
        if self._session is not None:
            self._session.close()
        with self._mu:
            self._closed = True
            conns = list(self._conns.values())
            self._conns.clear()
        for c in conns:
            c.unsubscribe()
        for c in conns:
            c.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _check_store(self) -> pb.StoreInfoResponse:
        deadline = time.monotonic() + self.timeout
        failures: List[str] = []
        answered: Optional[CairnError] = None
        last: Optional[CairnError] = None
        for c in self._helpers:
            try:
                resp = c.stub.StoreInfo(pb.StoreInfoRequest(), timeout=max(deadline - time.monotonic(), 0.001))
            except grpc.RpcError as err:
                last = from_rpc_error(err, False, False, pb.ErrorDetail)
                failures.append(f"{c.addr}: {last.message}")
                if answered is None and last.code not in (grpc.StatusCode.UNAVAILABLE,
                                                          grpc.StatusCode.DEADLINE_EXCEEDED):
                    answered = last
                continue
            if resp.store != self.store:
                raise StoreMismatch(f"node {c.addr} serves store {resp.store!r}, not {self.store!r}",
                                    code=grpc.StatusCode.FAILED_PRECONDITION, kind="store_mismatch",
                                    action="FIX_INPUT")
            return resp
        src = answered or last
        assert src is not None
        prefix = "" if answered else "no host answered: "
        raise make_error(prefix + "; ".join(failures), src.code, kind=src.kind, action=src.action)

    # -- the retry loop ------------------------------------------------------

    def _header(self, deadline: float) -> pb.RequestHeader:
        return pb.RequestHeader(store=self.store, timeout_ms=max(int((deadline - time.monotonic()) * 1000 + 0.999), 1))

    def _call(self, rt: _Route, fn: Callable[[pbgrpc.KVStub, pb.RequestHeader, float], Any],
              timeout: Timeout) -> Any:
        """Runs fn until it succeeds, fails in a way that must not be
        retried, or the deadline leaves no room for another try. fn(stub,
        header, attempt_timeout) makes one RPC."""
        if self._closed:
            raise _closed_error()
        deadline = time.monotonic() + _seconds(timeout, self.timeout)
        if self._cluster is not None:
            return self._call_cluster(rt, fn, deadline)
        backoff = [_INITIAL_BACKOFF]
        n = len(self._helpers)
        while True:
            start = next(self._rr)
            conn = self._helpers[start % n]
            now = time.monotonic()
            for i in range(n):  # skip failing hosts while another one is not
                c = self._helpers[(start + i) % n]
                if c.state not in _FAILED and not c.failing(now):
                    conn = c
                    break
            sent = True  # see _call_cluster
            try:
                return fn(conn.stub, self._header(deadline), max(deadline - time.monotonic(), 0.001))
            except grpc.RpcError as err:
                e = from_rpc_error(err, rt.write, sent, pb.ErrorDetail)
            except ValueError:
                if self._closed:  # an RPC that raced close()
                    raise _closed_error() from None
                raise
            if e.code == grpc.StatusCode.UNAVAILABLE and not e.kind:
                conn.mark_failing()
            if not _retryable(e, rt.write) or not _sleep(deadline, backoff):
                raise e

    def _targets(self, rt: _Route, t: Topology) -> Tuple[int, Sequence[int]]:
        if rt.kind == "key":
            s = t.shard_for(rt.major)
            return s, t.shards[s].replicas
        if rt.kind == "shard":
            sh = t.shards.get(rt.shard)
            if sh is None:
                raise CairnError(f"shard {rt.shard} is not in the store's topology (seq {t.seq}) any more",
                                 code=grpc.StatusCode.FAILED_PRECONDITION, kind="wrong_shard", action="NONE")
            return rt.shard, sh.replicas
        return 0, sorted(t.nodes)

    def _call_cluster(self, rt: _Route, fn: Callable[..., Any], deadline: float) -> Any:
        cl = self._cluster
        assert cl is not None
        avoid: Dict[int, bool] = {}
        seen: Dict[int, CairnError] = {}
        backoff = [_INITIAL_BACKOFF]
        last: Optional[CairnError] = None
        pause, quick = False, 0
        while True:
            t = cl.topo
            shard, reps = self._targets(rt, t)
            now = time.monotonic()
            usable = {r: not self._conn(t.nodes[r]).failing(now) for r in reps}
            if not any(usable[r] and not avoid.get(r) for r in reps):
                avoid.clear()  # every reachable replica failed this round
                pause = True
            if quick > 2 * len(reps):
                pause = True  # hints lead in circles (an election is under way)
            if pause and last is not None:
                if not _sleep(deadline, backoff):
                    raise _shard_failure(last, shard, reps, rt.leader, seen)
                quick = 0
            pause = False
            sh = t.shards.get(shard)
            reads = [] if rt.leader else read_order(reps, self._salt, next(self._rr) if self._spread_reads else None)
            node = choose(reps, rt.leader, cl.leader(shard), sh.preferred if sh else 0, rt.stick,
                          usable, avoid, reads)
            conn = self._conn(t.nodes[node])
            h = self._header(deadline)
            h.topology_seq = t.seq
            remaining = deadline - time.monotonic()
            e: Optional[CairnError] = None
            if not conn.wait_connecting(min(self.connect_timeout, remaining)):
                # The request was never sent: the node does not answer.
                e = Unavailable(f"no connection to node {node} ({conn.addr}) within {self.connect_timeout}s",
                                code=grpc.StatusCode.UNAVAILABLE, action="RETRY")
            else:
                # Whether the request left the client is not known once the
                # RPC starts: from_rpc_error treats gRPC's own "failed to
                # connect" (no connection was picked) as not sent.
                sent = True
                attempt = remaining / _ATTEMPT_SHARE if rt.bounded else remaining
                try:
                    resp = fn(conn.stub, h, max(attempt, 0.001))
                except ValueError:
                    if self._closed:  # an RPC that raced close()
                        raise _closed_error() from None
                    raise
                except grpc.RpcError as err:
                    e = from_rpc_error(err, rt.write, sent, pb.ErrorDetail)
                    if (rt.bounded and e.code == grpc.StatusCode.DEADLINE_EXCEEDED
                            and time.monotonic() < deadline):
                        e = Unavailable(f"node {node} ({conn.addr}) did not answer within {attempt:.3f}s",
                                        code=grpc.StatusCode.UNAVAILABLE, action="RETRY")
                        e.no_answer = True
                else:
                    if rt.leader and shard != 0:
                        cl.set_leader(shard, node)
                    rt.stick = node
                    return resp
            last = e
            seen[node] = e
            quick += 1
            what = _classify(e, rt.write)
            if what == _GIVE_UP:
                if e.code == grpc.StatusCode.DEADLINE_EXCEEDED:
                    raise _shard_failure(e, shard, reps, rt.leader, seen)
                raise e
            if what == _FOLLOW_LEADER:
                avoid[node] = True
                cl.forget_leader(shard, node)
                hint = e.leader_node
                if hint == 0 or hint == node:
                    pass
                elif hint not in reps:
                    self._refresh(t.seq, deadline)
                elif usable.get(hint):
                    cl.set_leader(shard, hint)
                    avoid.pop(hint, None)
            elif what == _TRY_ELSEWHERE:
                conn.mark_failing()
                avoid[node] = True
                cl.forget_leader(shard, node)
            elif what == _OTHER_REPLICA:
                avoid[node] = True
                cl.forget_leader(shard, node)
            elif what == _REFRESH:
                if (e.kind == "wrong_shard" and rt.kind == "key"
                        and cl.moved(t, rt.major, e.moved_to_shard, e.partitions)):
                    continue  # the partition moved: its new shard, at once
                self._refresh(t.seq, deadline)
                if e.kind == "wrong_shard":
                    avoid[node] = True
                    cl.forget_leader(shard, node)
                pause = True
            else:
                pause = True

    def _refresh(self, seen_seq: int, deadline: float) -> None:
        """Asks the store's nodes, then the hosts, for StoreInfo and installs
        the first answer (client/topology.go refreshTopology)."""
        cl = self._cluster
        assert cl is not None
        with cl.refresh_mu:
            t = cl.topo
            if t.seq > seen_seq or time.monotonic() - cl.last_refresh < _MIN_REFRESH_INTERVAL:
                return
            cl.last_refresh = time.monotonic()
            now = time.monotonic()
            addrs = [a for a in t.nodes.values() if not self._conn(a).failing(now)] + self._hosts
            for a in addrs:
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                try:
                    resp = self._conn(a).stub.StoreInfo(pb.StoreInfoRequest(), timeout=min(_REFRESH_ATTEMPT, left))
                except grpc.RpcError:
                    continue
                if resp.store != self.store:
                    continue
                try:
                    cl.install(resp)
                    return
                except ValueError:
                    continue

    # -- options -------------------------------------------------------------

    def _durability(self, d: Optional[Durability]) -> Optional[pb.Durability]:
        d = d or self.durability
        return d._pb() if d else None

    def _consistency(self, c: Optional[Consistency]) -> Optional[Consistency]:
        return c or self.consistency

    def _read_route(self, major: Sequence[str], c: Optional[Consistency]) -> _Route:
        return _Route("key", major, leader=c is not None and c.kind == _ABSOLUTE, bounded=_bounded(c))

    # -- operations ----------------------------------------------------------

    def store_info(self, *, timeout: Timeout = None) -> StoreInfo:
        """Asks a node about the store (a replicated store's newer topology
        is adopted on the way)."""
        def fn(stub: Any, h: Any, t: float) -> Any:
            return stub.StoreInfo(pb.StoreInfoRequest(), timeout=t)
        resp = self._call(_Route("any", bounded=True), fn, timeout)
        if self._cluster is not None:
            try:
                self._cluster.install(resp)
            except ValueError:
                pass
        lim = resp.limits
        return StoreInfo(resp.store, resp.partitions, resp.version, resp.topology_seq,
                         Limits(lim.max_key_bytes, lim.max_value_bytes, lim.max_components,
                                datetime.timedelta(milliseconds=lim.max_timeout_ms), lim.max_result_bytes,
                                lim.max_put_many_records),
                         resp.node, resp.HasField("topology"))

    def get(self, key: Key, *, consistency: Optional[Consistency] = None, timeout: Timeout = None) -> Optional[Record]:
        """The record at key, or None when there is none."""
        k = _pbkey(key)
        c = self._consistency(consistency)
        req = pb.GetRequest(key=k, consistency=c._pb() if c else None)

        def fn(stub: Any, h: Any, t: float) -> Any:
            req.header.CopyFrom(h)
            return stub.Get(req, timeout=t)
        resp = self._call(self._read_route(key.major, c), fn, timeout)
        if not resp.found:
            return None
        r = resp.record
        return Record(key, r.value, Version(r.version), _exp(r.expiration_ms))

    def _write(self, key: Key, op: pb.PutOp, durability: Optional[Durability], timeout: Timeout) -> Result:
        req = pb.PutRequest(op=op, durability=self._durability(durability))

        def fn(stub: Any, h: Any, t: float) -> Any:
            req.header.CopyFrom(h)
            return stub.Put(req, timeout=t)
        resp = self._call(_Route("key", key.major, write=True, leader=True), fn, timeout)
        return Result._from_pb(key, resp.result)

    def _put_op(self, key: Key, value: bytes, cond: int, match: bytes, ttl: Optional[datetime.timedelta],
                ret: Optional[ReturnChoice]) -> pb.PutOp:
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise TypeError(f"a value is bytes, not {type(value).__name__} (encode text first)")
        op = pb.PutOp(key=_pbkey(key), value=bytes(value), condition=_enum(cond), match_version=bytes(match),
                      ttl_ms=_ms(ttl))
        if ret:
            setattr(op, "return", int(ret))
        return op

    def put(self, key: Key, value: bytes, *, ttl: Optional[datetime.timedelta] = None,
            durability: Optional[Durability] = None, timeout: Timeout = None) -> Version:
        """Writes the record; returns its new version. ``ttl`` makes it
        expire that long after the write (None: never)."""
        r = self._write(key, self._put_op(key, value, 0, b"", ttl, None), durability, timeout)
        assert r.version is not None
        return r.version

    def put_if_absent(self, key: Key, value: bytes, *, ttl: Optional[datetime.timedelta] = None,
                      return_: Optional[ReturnChoice] = None, durability: Optional[Durability] = None,
                      timeout: Timeout = None) -> Result:
        """Writes the record only if none exists; ``result.done`` says whether it did."""
        return self._write(key, self._put_op(key, value, _IF_ABSENT, b"", ttl, return_), durability, timeout)

    def put_if_present(self, key: Key, value: bytes, *, ttl: Optional[datetime.timedelta] = None,
                       return_: Optional[ReturnChoice] = None, durability: Optional[Durability] = None,
                       timeout: Timeout = None) -> Result:
        """Writes the record only if one exists."""
        return self._write(key, self._put_op(key, value, _IF_PRESENT, b"", ttl, return_), durability, timeout)

    def put_if_version(self, key: Key, value: bytes, match: bytes, *, ttl: Optional[datetime.timedelta] = None,
                       return_: Optional[ReturnChoice] = None, durability: Optional[Durability] = None,
                       timeout: Timeout = None) -> Result:
        """Writes the record only if its current version is ``match``."""
        return self._write(key, self._put_op(key, value, _IF_VERSION, match, ttl, return_), durability, timeout)

    def merge_fields(self, key: Key, fields: Fields, *, ttl: Optional[datetime.timedelta] = None,
                     durability: Optional[Durability] = None, timeout: Timeout = None) -> Version:
        """Writes ``fields`` into the field record at key in one round trip
        (cairn.fields): each replaces the stored field of its name, the
        others are appended; with no record there, the record is ``fields``.
        A stored value that is not a field record raises InvalidArgument
        (kind not_field_record), and a merged record over max_value_bytes
        LimitExceeded; then nothing is written. Returns the new version."""
        op = self._put_op(key, encode_fields(fields), 0, b"", ttl, None)
        op.merge_fields = True
        r = self._write(key, op, durability, timeout)
        assert r.version is not None
        return r.version

    def update_fields(self, key: Key, fields: Fields, *, ttl: Optional[datetime.timedelta] = None,
                      return_: Optional[ReturnChoice] = None, durability: Optional[Durability] = None,
                      timeout: Timeout = None) -> Result:
        """merge_fields for a record that exists: with none at key,
        ``result.done`` is False and nothing is written (YCSB's update)."""
        op = self._put_op(key, encode_fields(fields), _IF_PRESENT, b"", ttl, return_)
        op.merge_fields = True
        return self._write(key, op, durability, timeout)

    def _delete(self, key: Key, cond: int, match: bytes, return_: Optional[ReturnChoice],
                durability: Optional[Durability], timeout: Timeout) -> Result:
        op = pb.DeleteOp(key=_pbkey(key), condition=_enum(cond), match_version=bytes(match))
        if return_:
            setattr(op, "return", int(return_))
        req = pb.DeleteRequest(op=op, durability=self._durability(durability))

        def fn(stub: Any, h: Any, t: float) -> Any:
            req.header.CopyFrom(h)
            return stub.Delete(req, timeout=t)
        resp = self._call(_Route("key", key.major, write=True, leader=True), fn, timeout)
        return Result._from_pb(key, resp.result)

    def delete(self, key: Key, *, return_: Optional[ReturnChoice] = None, durability: Optional[Durability] = None,
               timeout: Timeout = None) -> Result:
        """Deletes the record; ``result.done`` is False when there was none."""
        return self._delete(key, 0, b"", return_, durability, timeout)

    def delete_if_version(self, key: Key, match: bytes, *, return_: Optional[ReturnChoice] = None,
                          durability: Optional[Durability] = None, timeout: Timeout = None) -> Result:
        """Deletes the record only if its current version is ``match``."""
        return self._delete(key, _IF_VERSION, match, return_, durability, timeout)

    def execute(self, ops: Sequence[Op], *, ttl: Optional[datetime.timedelta] = None,
                return_: Optional[ReturnChoice] = None, durability: Optional[Durability] = None,
                timeout: Timeout = None) -> List[Result]:
        """Runs the operations atomically: all of them or none. They must
        share one major path. Returns one Result per op; raises
        ExecutionAborted when an op marked abort_if_unsuccessful was not
        done (then nothing was written)."""
        ops = list(ops)
        for i, op in enumerate(ops):
            _check_utf8(op.key, f"execute: op {i}: {'delete' if op.is_delete else 'put'}.key")
        for i, op in enumerate(ops):
            if op.key.major != ops[0].key.major:
                raise InvalidArgument(
                    f"execute: op {i} key {op.key} and op 0 key {ops[0].key} have different major paths; "
                    "an atomic batch must stay within one major path",
                    code=grpc.StatusCode.INVALID_ARGUMENT, kind="multiple_major_paths", action="FIX_INPUT")
        req = pb.ExecuteRequest(ops=[op._pb(return_, ttl) for op in ops], durability=self._durability(durability))

        def fn(stub: Any, h: Any, t: float) -> Any:
            req.header.CopyFrom(h)
            return stub.Execute(req, timeout=t)
        major = ops[0].key.major if ops else ()
        resp = self._call(_Route("key", major, write=True, leader=True), fn, timeout)
        if not resp.committed:
            i = resp.failed_index
            if not 0 <= i < len(ops):
                raise CairnError(f"execute: server reported failed op {i} of {len(ops)}",
                                 code=grpc.StatusCode.INTERNAL)
            raise ExecutionAborted(i, Result._from_pb(ops[i].key, resp.failed_result))
        if len(resp.results) != len(ops):
            raise CairnError(f"execute: server returned {len(resp.results)} results for {len(ops)} ops",
                             code=grpc.StatusCode.INTERNAL)
        return [Result._from_pb(op.key, r) for op, r in zip(ops, resp.results)]

    def multi_get(self, parent: Key, *, range: Optional[KeyRange] = None, depth: Optional[Depth] = None,
                  keys_only: bool = False, consistency: Optional[Consistency] = None,
                  timeout: Timeout = None) -> List[Record]:
        """Every record under parent (a complete major path, optionally some
        minor components), in key order."""
        return list(self.multi_get_iterator(parent, range=range, depth=depth, keys_only=keys_only,
                                            consistency=consistency, timeout=timeout))

    def multi_get_iterator(self, parent: Key, *, range: Optional[KeyRange] = None, depth: Optional[Depth] = None,
                           direction: Direction = Direction.FORWARD, batch_size: int = DEFAULT_BATCH_SIZE,
                           keys_only: bool = False, consistency: Optional[Consistency] = None,
                           timeout: Timeout = None) -> Iterator[Record]:
        """A generator of the records under parent, fetched lazily a page
        (batch_size records) at a time; ``timeout`` applies to each page."""
        c = self._consistency(consistency)
        req = pb.MultiGetRequest(parent=_pbkey(parent, "parent"), range=_pbrange(range), depth=_enum(depth),
                                 direction=_enum(direction), keys_only=keys_only,
                                 batch_size=batch_size if batch_size > 0 else DEFAULT_BATCH_SIZE,
                                 consistency=c._pb() if c else None)
        rt = self._read_route(parent.major, c)

        def fn(stub: Any, h: Any, t: float) -> Any:
            req.header.CopyFrom(h)
            return stub.MultiGet(req, timeout=t)
        yield from self._pages(req, rt, fn, timeout, keys_only)

    def _pages(self, req: Any, rt: _Route, fn: Callable[..., Any], timeout: Timeout,
               keys_only: bool) -> Iterator[Record]:
        resume = b""
        while True:
            req.resume = resume
            resp = self._call(rt, fn, timeout)
            for r in resp.records:
                yield Record._from_pb(r, keys_only)
            if not resp.resume:
                return
            if not resp.records and resp.resume == resume:
                raise CairnError("server returned an empty page with an unchanged resume token",
                                 code=grpc.StatusCode.INTERNAL)
            resume = resp.resume

    def store_iterator(self, parent: Optional[Key] = None, *, range: Optional[KeyRange] = None,
                       depth: Optional[Depth] = None, batch_size: int = DEFAULT_BATCH_SIZE, keys_only: bool = False,
                       consistency: Optional[Consistency] = None, timeout: Timeout = None) -> Iterator[Record]:
        """A generator of every record in the store (or those whose major
        path starts with parent's), shard by shard, fetched lazily a page at
        a time. Order across major paths is unspecified."""
        c = self._consistency(consistency)
        req = pb.StoreScanRequest(range=_pbrange(range), depth=_enum(depth), keys_only=keys_only,
                                  batch_size=batch_size if batch_size > 0 else DEFAULT_BATCH_SIZE,
                                  consistency=c._pb() if c else None)
        if parent is not None:
            req.parent.CopyFrom(_pbkey(parent, "parent"))
        shards = [0] if self._cluster is None else sorted(self._cluster.topo.shards)
        for s in shards:
            req.shard = s
            rt = _Route("shard", shard=s, leader=c is not None and c.kind == _ABSOLUTE, bounded=_bounded(c))

            def fn(stub: Any, h: Any, t: float) -> Any:
                req.header.CopyFrom(h)
                return stub.StoreScan(req, timeout=t)
            yield from self._pages(req, rt, fn, timeout, keys_only)

    def multi_delete(self, parent: Key, *, range: Optional[KeyRange] = None, depth: Optional[Depth] = None,
                     durability: Optional[Durability] = None, timeout: Timeout = None) -> int:
        """Deletes the records under parent atomically; returns how many."""
        req = pb.MultiDeleteRequest(parent=_pbkey(parent, "parent"), range=_pbrange(range), depth=_enum(depth),
                                    durability=self._durability(durability))

        def fn(stub: Any, h: Any, t: float) -> Any:
            req.header.CopyFrom(h)
            return stub.MultiDelete(req, timeout=t)
        return self._call(_Route("key", parent.major, write=True, leader=True), fn, timeout).deleted

    def put_many(self, records: Iterable[Tuple[Key, bytes]], max_in_flight: int = 8, *,
                 ttl: Optional[datetime.timedelta] = None, durability: Optional[Durability] = None,
                 timeout: Timeout = None) -> List[Union[Version, CairnError]]:
        """Writes (key, value) pairs in bulk, as Oracle NoSQL's
        put(List<EntryStream>) does: grouped by the shard that owns them
        into PutMany requests (of any major paths, at most the store's
        max_put_many_records records and 4 MiB each; each record is written
        on its own, not atomically with the others), with at most
        max_in_flight requests in flight. Returns one result per record, in
        order: its new Version, or the CairnError why it was not written
        (``maybe_applied`` for an unknown outcome, never retried). A record
        refused for a reason that passes, certainly not applied (its shard
        moved or changed leader, a leader change dropped it, its partition
        was moving), is sent again after a backoff and a topology refresh,
        within the timeout."""
        entries = list(records)
        for k, v in entries:
            if not isinstance(k, Key):
                raise TypeError(f"put_many takes (Key, bytes) pairs, got a {type(k).__name__} key")
        results: List[Union[Version, CairnError, None]] = [None] * len(entries)
        todo = list(range(len(entries)))
        seen = self._cluster.topo.seq if self._cluster else 0
        self._put_many_round(entries, todo, max_in_flight, results, ttl, durability, timeout)
        deadline = time.monotonic() + _seconds(timeout, self.timeout)
        backoff = [_INITIAL_BACKOFF]
        for _ in range(1, _PUT_MANY_ROUNDS):
            todo = [i for i in todo if _resendable(results[i])]
            if not todo or not _sleep(deadline, backoff):
                break
            if self._cluster is not None:
                self._refresh(seen, deadline)
            seen = self._cluster.topo.seq if self._cluster else 0
            left = deadline - time.monotonic()
            if left <= 0:
                break
            self._put_many_round(entries, todo, max_in_flight, results, ttl, durability, left)
        return results  # type: ignore[return-value]

    def _put_many_round(self, entries: List[Tuple[Key, bytes]], todo: List[int], max_in_flight: int,
                        results: List[Any], ttl: Optional[datetime.timedelta], durability: Optional[Durability],
                        timeout: Timeout) -> None:
        batches = self._put_many_batches(entries, todo)
        work = lambda b: self._put_batch(entries, b, results, ttl, durability, timeout)  # noqa: E731
        if max_in_flight <= 1 or len(batches) <= 1:
            for b in batches:
                work(b)
            return
        with ThreadPoolExecutor(max_workers=min(max_in_flight, len(batches))) as ex:
            for f in [ex.submit(work, b) for b in batches]:
                f.result()

    def _put_batch(self, entries: List[Tuple[Key, bytes]], batch: Tuple[int, List[int]],
                   results: List[Any], ttl: Optional[datetime.timedelta], durability: Optional[Durability],
                   timeout: Timeout) -> None:
        shard, idx = batch
        try:
            req = pb.PutManyRequest(ops=[self._put_op(entries[i][0], entries[i][1], 0, b"", ttl, None) for i in idx],
                                    durability=self._durability(durability))

            def fn(stub: Any, h: Any, t: float) -> Any:
                req.header.CopyFrom(h)
                return stub.PutMany(req, timeout=t)
            resp = self._call(_Route("shard", shard=shard, write=True, leader=True), fn, timeout)
            if len(resp.results) != len(idx):
                raise CairnError(f"put_many: the server returned {len(resp.results)} results for {len(idx)} records",
                                 code=grpc.StatusCode.INTERNAL, maybe_applied=True)
        except CairnError as e:
            for i in idx:
                results[i] = e
            return
        for i, r in zip(idx, resp.results):
            results[i] = _record_error(r) if r.error_code else Version(r.result.new_version)

    def _put_many_batches(self, entries: List[Tuple[Key, bytes]], todo: List[int]) -> List[Tuple[int, List[int]]]:
        limit = self._max_put_many()
        by_shard: Dict[int, List[int]] = {}
        for i in todo:
            by_shard.setdefault(self.shard_of(entries[i][0]), []).append(i)
        per: Dict[int, List[List[int]]] = {}
        for s, idx in by_shard.items():
            cur: List[int] = []
            size = 0
            for i in idx:
                n = len(entries[i][1])
                if len(cur) == limit or (cur and size + n > _PUT_MANY_BATCH_BYTES):
                    per.setdefault(s, []).append(cur)
                    cur, size = [], 0
                cur.append(i)
                size += n
            per.setdefault(s, []).append(cur)
        # Interleave the shards so that the requests in flight spread over them.
        out: List[Tuple[int, List[int]]] = []
        for k in range(max((len(b) for b in per.values()), default=0)):
            out.extend((s, b[k]) for s, b in per.items() if k < len(b))
        return out

    def _max_put_many(self) -> int:
        if self._put_many_limit == 0:
            self._put_many_limit = max(1, self.store_info().limits.max_put_many_records or 1)
        return self._put_many_limit

    # -- introspection (tests, tools) -----------------------------------------

    @property
    def topology(self) -> Optional[Topology]:
        """The topology the client routes by (None for cairn lite)."""
        return self._cluster.topo if self._cluster else None

    def shard_of(self, key: Key) -> int:
        """The shard that owns key's major path by the client's topology (0 for lite)."""
        return self._cluster.topo.shard_for(key.major) if self._cluster else 0

    def cached_leader(self, shard: int) -> int:
        """The node the client believes leads shard (0: unknown)."""
        return self._cluster.leader(shard) if self._cluster else 0


def _closed_error() -> CairnError:
    return CairnError("the client is closed", code=grpc.StatusCode.CANCELLED, action="NONE")


def _exp(ms: int) -> Optional[datetime.datetime]:
    if ms == 0:
        return None
    return datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.timezone.utc)


def _sleep(deadline: float, backoff: List[float]) -> bool:
    """Waits a jittered backoff, then doubles it up to 500 ms; False without
    waiting if the deadline leaves no room."""
    wait = backoff[0] / 2 + random.uniform(0, backoff[0] / 2)
    if deadline - time.monotonic() < wait:
        return False
    time.sleep(wait)
    backoff[0] = min(2 * backoff[0], _MAX_BACKOFF)
    return True


def _shard_failure(last: CairnError, shard: int, reps: Sequence[int], leader: bool,
                   seen: Dict[int, CairnError]) -> CairnError:
    if shard == 0 or not reps or last.code == grpc.StatusCode.CANCELLED:
        return last
    if not all(r in seen for r in reps) and not leader:
        return last
    tried = ", ".join(f"sn{r} ({seen[r].kind or seen[r].code.name})" for r in reps if r in seen)
    what = "has no leader" if leader else "could not serve the read"
    e = make_error(f"shard rg{shard} {what}: tried {tried}; last: {last.message}", last.code, kind=last.kind,
                   action=last.action, maybe_applied=last.maybe_applied)
    e.shard = f"rg{shard}"
    return e
