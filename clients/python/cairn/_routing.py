"""What a client knows about a replicated store: its topology and, per
shard, the node it believes leads. Both are hints the servers correct
(not_leader, wrong_shard); nothing depends on them being right. The rules
are the Go client's (client/route.go, client/topology.go)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from ._pb import kv_pb2 as pb
from .keys import hash_major, partition_of


@dataclass(frozen=True)
class Shard:
    id: int
    replicas: Tuple[int, ...]
    preferred: int


@dataclass(frozen=True)
class Topology:
    """A store's topology: nodes (id -> address), shards, and the shard of
    each partition."""

    seq: int
    partitions: int
    nodes: Dict[int, str]
    shards: Dict[int, Shard]
    partition_shard: Tuple[int, ...]

    @staticmethod
    def from_pb(t: pb.Topology) -> "Topology":
        nodes = {n.id: n.addr for n in t.nodes}
        shards = {s.id: Shard(s.id, tuple(s.replicas), s.preferred) for s in t.shards}
        ps = tuple(t.partition_shard)
        if t.partitions == 0 or len(ps) != t.partitions:
            raise ValueError(f"topology seq {t.seq}: {len(ps)} partition owners for {t.partitions} partitions")
        for s in set(ps):
            if s not in shards:
                raise ValueError(f"topology seq {t.seq}: a partition belongs to unknown shard {s}")
        for s in shards.values():
            for r in s.replicas:
                if r not in nodes:
                    raise ValueError(f"topology seq {t.seq}: shard {s.id} has unknown replica {r}")
        return Topology(t.seq, t.partitions, nodes, shards, ps)

    def shard_for(self, major: Sequence[str]) -> int:
        return self.partition_shard[partition_of(hash_major(major), self.partitions)]


class Cluster:
    """The topology and cached leaders; safe for concurrent use."""

    def __init__(self, resp: pb.StoreInfoResponse) -> None:
        self._mu = threading.Lock()
        self.topo: Topology = Topology.from_pb(resp.topology)
        self._leaders: Dict[int, int] = {}
        self.refresh_mu = threading.Lock()
        self.last_refresh = 0.0
        self.install(resp)

    def install(self, resp: pb.StoreInfoResponse) -> bool:
        """Adopts a newer topology from a StoreInfo answer, and the answering
        node's view of leaders for shards whose leader is not cached."""
        if not resp.HasField("topology"):
            return False
        t = Topology.from_pb(resp.topology)
        with self._mu:
            changed = t.seq > self.topo.seq
            if changed:
                self.topo = t
                for s, n in list(self._leaders.items()):
                    sh = t.shards.get(s)
                    if sh is None or n not in sh.replicas:
                        del self._leaders[s]
            for st in resp.local_shards:
                if st.shard in self._leaders or st.leader == 0:
                    continue
                sh = self.topo.shards.get(st.shard)
                if sh is not None and st.leader in sh.replicas:
                    self._leaders[st.shard] = st.leader
            return changed

    def leader(self, s: int) -> int:
        return self._leaders.get(s, 0)

    def set_leader(self, s: int, n: int) -> None:
        with self._mu:
            self._leaders[s] = n

    def forget_leader(self, s: int, n: int) -> None:
        with self._mu:
            if self._leaders.get(s) == n:
                del self._leaders[s]

    def moved(self, t: Topology, major: Sequence[str], to: int, partitions: int) -> bool:
        """wrong_shard named the shard the partition moved to: adopt a copy
        of t in which it belongs there (same seq). True if the request should
        be retried at once."""
        if to == 0 or partitions != t.partitions or to not in t.shards:
            return False
        p = partition_of(hash_major(major), t.partitions)
        with self._mu:
            if self.topo is not t or t.partition_shard[p] == to:
                return self.topo is not t
            ps = list(t.partition_shard)
            ps[p] = to
            self.topo = Topology(t.seq, t.partitions, t.nodes, t.shards, tuple(ps))
            return True


def read_order(replicas: Sequence[int], salt: int, rr: Optional[int] = None) -> List[int]:
    """The order in which a read that any replica may serve tries replicas
    (client/home.go): round robin from rr when given (spread_reads), else
    the client's own ranking of the nodes, a hash of its random salt and the
    node id, so that each client has a home replica and clients spread over
    the nodes."""
    if rr is not None:
        n = len(replicas)
        return [replicas[(rr + i) % n] for i in range(n)]
    return sorted(replicas, key=lambda x: hash((salt, x)))


def choose(replicas: Sequence[int], leader: bool, cached: int, preferred: int, stick: int,
           usable: Dict[int, bool], avoid: Dict[int, bool], reads: Sequence[int]) -> int:
    """The node for one attempt (client/route.go choose); reads is
    read_order's answer."""
    if leader:
        order: List[int] = [cached, preferred, *replicas]
    else:
        order = [stick, *reads]
    order = [x for x in order if x != 0 and x in replicas]
    for x in order:
        if usable.get(x) and not avoid.get(x):
            return x
    for x in order:
        if not avoid.get(x):
            return x
    return order[0]
