"""Routing against a real 3-node cluster (2 shards of 3 replicas, 100
partitions), including a shard leader killed with SIGKILL."""

import datetime
import re

import pytest

from cairn import CairnError, MaybeApplied, Client, Consistency, Key, Op, Version, hash_major, partition_of

from conftest import STORE, wait_for


@pytest.fixture(scope="module")
def cc(cluster):
    c = Client(cluster.hosts[:1], store=STORE, timeout=10)  # one host: the rest is learnt from the topology
    yield c
    c.close()


def leaders(cluster):
    """shard -> leading node, from `cairn cluster status`."""
    out = cluster.run("status")
    # The SHARD table: "1      2       6     1: 6/6  2*: 6/6  3: 6/6".
    return {int(s): int(n) for s, n in re.findall(r"^(\d+)\s+(\d+)\s+\d+\s+\d+\*?: ", out, re.M)}


def test_topology(cc, cluster):
    t = cc.topology
    assert t is not None and t.partitions == 100
    assert set(t.nodes) == set(cluster.nodes) and t.nodes == cluster.nodes
    assert sorted(t.shards) == [1, 2] and all(len(s.replicas) == 3 for s in t.shards.values())
    info = cc.store_info()
    assert info.replicated and info.partitions == 100 and info.topology_seq == t.seq
    k = Key.parse("/users/alice/-/email")
    assert cc.shard_of(k) == t.partition_shard[partition_of(hash_major(k.major), 100)]


def test_writes_go_to_the_leader(cc, cluster, ns):
    by_shard = {}
    for i in range(40):
        k = Key([ns, str(i)])
        cc.put(k, b"x")
        by_shard.setdefault(cc.shard_of(k), k)
    assert set(by_shard) == {1, 2}, "40 major paths should cover both shards"
    lead = leaders(cluster)
    for s in (1, 2):
        assert cc.cached_leader(s) == lead[s], f"shard {s}"


def test_operations(cc, ns):
    m = Key([ns, "u"])
    v = cc.put(m.child("a"), b"1")
    assert cc.get(m.child("a"), consistency=Consistency.ABSOLUTE).version == v
    assert cc.get(m.child("a"), consistency=Consistency.version(v, datetime.timedelta(seconds=5))).value == b"1"
    wait_for(lambda: cc.get(m.child("a")) is not None, what="a replica to have the record")
    assert cc.put_if_absent(m.child("a"), b"2").done is False
    assert cc.put_if_version(m.child("a"), b"2", v).done
    res = cc.execute([Op.put(m.child("b"), b"b"), Op.put(m.child("c"), b"c")])
    assert all(r.done for r in res)
    assert [r.key.minor for r in cc.multi_get(m, consistency=Consistency.ABSOLUTE)] == [("a",), ("b",), ("c",)]
    assert cc.multi_delete(m) == 3
    assert cc.delete(m.child("a")).done is False


def test_store_iterator_covers_both_shards(cc, ns):
    keys = [Key([ns, str(i)], ["m"]) for i in range(60)]
    res = cc.put_many([(k, b"v") for k in keys])
    assert all(isinstance(r, Version) for r in res)
    assert {cc.shard_of(k) for k in keys} == {1, 2}
    got = [r.key for r in cc.store_iterator(Key([ns]), batch_size=9, consistency=Consistency.ABSOLUTE)]
    assert sorted(map(str, got)) == sorted(map(str, keys))


def test_follows_not_leader_hint(cc, cluster, ns):
    k = Key([ns])
    cc.put(k, b"x")
    s = cc.shard_of(k)
    lead = cc.cached_leader(s)
    other = next(n for n in cc.topology.shards[s].replicas if n != lead)
    cc._cluster.set_leader(s, other)  # a stale leader: the node answers not_leader naming the real one
    cc.put(k, b"y")
    assert cc.cached_leader(s) == lead
    assert cc.get(k, consistency=Consistency.ABSOLUTE).value == b"y"


def test_leader_killed_writes_keep_succeeding(cc, cluster, ns):
    k0 = Key([ns], ["0"])
    cc.put(k0, b"x")
    s = cc.shard_of(k0)
    old = cc.cached_leader(s)
    assert old != 0
    cluster.kill(old)
    try:
        versions = {}
        for i in range(1, 61):  # about 1 s of elections is ridden out within each write's timeout
            k = Key([ns], [str(i)])
            try:
                versions[k] = cc.put(k, str(i).encode())
            except MaybeApplied as e:
                # Only the first write may have gone out on the dead node's
                # connection before the client saw it break: its outcome is
                # unknown, it is not retried, and a read tells.
                assert i == 1, f"write {i}: {e}"
                rec = cc.get(k, consistency=Consistency.ABSOLUTE)
                if rec is not None:
                    versions[k] = rec.version
        new = cc.cached_leader(s)
        assert new not in (0, old)
        # Every acknowledged write is there, read from the new leader.
        for k, v in versions.items():
            assert cc.get(k, consistency=Consistency.ABSOLUTE).version == v
        # Reads of any replica skip the dead node too.
        for k in list(versions)[:10]:
            assert cc.get(k, consistency=Consistency.time_lag(datetime.timedelta(seconds=5))) is not None
        # put_many across both shards while the node is down.
        res = cc.put_many([(Key([ns, "pm", str(i)]), b"v") for i in range(200)], max_in_flight=4)
        errs = [r for r in res if isinstance(r, CairnError)]
        assert not errs, errs[:3]
    finally:
        cluster.start(old)
    # The node is back: a client that starts from it alone still works.
    c2 = Client([cluster.nodes[old]], store=STORE, timeout=10)
    try:
        assert c2.get(k0, consistency=Consistency.ABSOLUTE).value == b"x"
        c2.put(k0, b"after")
    finally:
        c2.close()


def test_misrouted_write_lands(cc, ns):
    # The client's topology puts the key's partition in the other shard. Every
    # node holds a replica of both shards here (rf 3 on 3 nodes), so the
    # node asked serves the key's real shard or answers not_leader naming
    # its leader, which the client follows; the write lands where it belongs.
    import dataclasses
    k = Key([ns])
    t = cc.topology
    p = partition_of(hash_major(k.major), t.partitions)
    right = t.partition_shard[p]
    wrong = next(s for s in t.shards if s != right)
    ps = list(t.partition_shard)
    ps[p] = wrong
    cc._cluster.topo = dataclasses.replace(t, partition_shard=tuple(ps))
    try:
        assert cc.shard_of(k) == wrong
        for i in range(5):
            v = cc.put(k, str(i).encode())
    finally:
        cc._cluster.topo = t
    rec = cc.get(k, consistency=Consistency.ABSOLUTE)
    assert rec.version == v and rec.value == b"4"


def test_moved_partition_hint():
    # wrong_shard with moved_to_shard patches a copy of the topology at once
    # (same seq), when the partition counts agree (client/topology.go moved).
    from cairn._routing import Cluster, Shard, Topology
    t = Topology(5, 4, {1: "a", 2: "b"}, {1: Shard(1, (1, 2), 1), 2: Shard(2, (1, 2), 2)}, (1, 1, 2, 2))
    cl = Cluster.__new__(Cluster)
    import threading
    cl._mu, cl.topo, cl._leaders = threading.Lock(), t, {}
    major = ["m"]
    p = partition_of(hash_major(major), 4)
    to = 2 if t.partition_shard[p] == 1 else 1
    assert not cl.moved(t, major, to, 100)  # another partition count: not comparable
    assert not cl.moved(t, major, 9, 4)     # a shard the topology does not know
    assert cl.moved(t, major, to, 4)
    assert cl.topo.seq == 5 and cl.topo.shard_for(major) == to
    assert cl.moved(t, major, to, 4)        # t is no longer current: retry with the patched one


def test_read_order_home_and_spread():
    # client/home.go: without spread_reads a client's reads of a shard try
    # its own ranking of the replicas, the same each time, and clients with
    # other salts rank them otherwise; with it, round robin.
    from cairn._routing import choose, read_order
    reps = (1, 2, 3)
    all_up = {1: True, 2: True, 3: True}
    homes = set()
    for salt in range(60):
        order = read_order(reps, salt)
        assert sorted(order) == [1, 2, 3] and read_order(reps, salt) == order
        homes.add(order[0])
        assert choose(reps, False, 0, 0, 0, all_up, {}, order) == order[0]
        up = {order[1]: True, order[2]: True}  # the home is failing
        assert choose(reps, False, 0, 0, 0, up, {}, order) == order[1]
        assert choose(reps, False, 0, 0, 0, all_up, {order[0]: True, order[1]: True}, order) == order[2]
        assert choose(reps, True, 0, 3, 0, all_up, {}, []) == 3  # leader routes ignore it
    assert homes == {1, 2, 3}, homes
    assert [read_order(reps, 0, rr)[0] for rr in range(4)] == [1, 2, 3, 1]


def test_spread_reads(cluster, ns, monkeypatch):
    # A client's NONE_REQUIRED reads of a shard go to its home replica; with
    # spread_reads=True, round robin over the shard's three replicas.
    import cairn.client as client_mod
    served = []
    real = client_mod.choose

    def spy(*args, **kwargs):
        node = real(*args, **kwargs)
        served.append(node)
        return node

    monkeypatch.setattr(client_mod, "choose", spy)
    k = Key([ns, "spread"]).child("x")
    with Client(cluster.hosts[:1], store=STORE, timeout=10) as home, \
            Client(cluster.hosts[:1], store=STORE, timeout=10, spread_reads=True) as spread:
        v = home.put(k, b"v")
        wait_for(lambda: all(spread.get(k) is not None for _ in range(6)), what="every replica to have the record")
        for c, nodes in ((home, 1), (spread, 3)):
            served.clear()
            for _ in range(6):
                assert c.get(k).version == v
            assert len(set(served)) == nodes, f"reads went to nodes {served}"
