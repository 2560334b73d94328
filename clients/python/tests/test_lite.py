"""Every operation against a real ``cairn lite``."""

import datetime
import time

import grpc
import pytest

from cairn import (CairnError, Client, Consistency, Depth, Direction, Durability, ExecutionAborted,
                   InvalidArgument, Key, KeyRange, LimitExceeded, Op, ReturnChoice, StoreMismatch, SyncPolicy,
                   Unavailable, Version)

from conftest import STORE, start_lite, stop_lite, wait_for


def test_readme_example(lite):
    # Exactly the smallest use, against this lite's port.
    from cairn import Client, Key
    c = Client([lite.addr], store="kvstore")
    v = c.put(Key.parse("/users/alice/-/email"), b"alice@example.com")
    rec = c.get(Key.parse("/users/alice/-/email"))
    assert rec.value == b"alice@example.com" and rec.version == v
    assert isinstance(rec.version, Version) and len(str(v)) > 0
    assert c.get(Key.parse("/users/nobody/-/email")) is None
    c.close()


def test_store_info(client):
    info = client.store_info()
    assert info.store == STORE and info.partitions == 10 and not info.replicated
    assert info.limits.max_value_bytes == 65536
    assert info.limits.max_timeout == datetime.timedelta(minutes=5)
    assert info.limits.max_result_bytes > 0
    assert client.topology is None


def test_put_get_delete(client, ns):
    k = Key([ns, "a"], ["x"])
    v1 = client.put(k, b"one")
    v2 = client.put(k, b"two", durability=Durability(SyncPolicy.SYNC))
    assert v1 != v2
    rec = client.get(k, consistency=Consistency.ABSOLUTE, timeout=2)
    assert rec.value == b"two" and rec.version == v2 and rec.key == k and rec.expiration is None
    r = client.delete(k, return_=ReturnChoice.ALL)
    assert r.done and r.previous.value == b"two" and r.previous.version == v2
    assert client.get(k) is None
    assert not client.delete(k).done


def test_conditions(client, ns):
    k = Key([ns], ["c"])
    r = client.put_if_present(k, b"x")
    assert not r.done and r.version is None
    r = client.put_if_absent(k, b"first")
    assert r.done and r.version
    v1 = r.version
    r = client.put_if_absent(k, b"second", return_=ReturnChoice.VALUE)
    assert not r.done and r.previous.value == b"first"
    r = client.put_if_present(k, b"third")
    assert r.done
    v3 = r.version
    assert not client.put_if_version(k, b"stale", v1).done
    r = client.put_if_version(k, b"fourth", v3, return_=ReturnChoice.VERSION)
    assert r.done and r.previous.version == v3
    v4 = r.version
    assert not client.delete_if_version(k, v3).done
    assert client.delete_if_version(k, v4).done
    assert client.get(k) is None


def test_ttl(client, ns):
    k = Key([ns], ["ttl"])
    before = datetime.datetime.now(datetime.timezone.utc)
    client.put(k, b"x", ttl=datetime.timedelta(hours=1))
    exp = client.get(k).expiration
    assert exp is not None
    assert datetime.timedelta(minutes=59) < exp - before < datetime.timedelta(minutes=61)
    client.put(k, b"y", ttl=datetime.timedelta(milliseconds=300))
    wait_for(lambda: client.get(k) is None, timeout=5, what="the record to expire")


def test_consistency_kinds(client, ns):
    k = Key([ns], ["cons"])
    v = client.put(k, b"x")
    assert client.get(k, consistency=Consistency.NONE_REQUIRED).value == b"x"
    assert client.get(k, consistency=Consistency.time_lag(datetime.timedelta(seconds=1))).value == b"x"
    assert client.get(k, consistency=Consistency.version(v, datetime.timedelta(seconds=1))).value == b"x"
    assert repr(Consistency.ABSOLUTE) == "Consistency.ABSOLUTE"


def test_oversized_value_is_limit_exceeded(client, ns):
    with pytest.raises(LimitExceeded) as ei:
        client.put(Key([ns], ["big"]), b"x" * 65537)
    e = ei.value
    # Limit names become StoreInfo's (max_value_bytes) with design §6.
    assert e.kind == "limit_exceeded" and e.limit.replace("_", "-") == "max-value-bytes"
    assert e.max == 65536 and e.seen == 65537
    assert e.action == "FIX_INPUT" and not e.retryable and not e.maybe_applied
    assert e.code == grpc.StatusCode.INVALID_ARGUMENT
    assert isinstance(e, InvalidArgument) and isinstance(e, CairnError)
    assert e.limit in str(e)


def test_invalid_input(client, ns):
    with pytest.raises(InvalidArgument) as ei:
        client.multi_get(Key([ns]), range=KeyRange.between("z", "a"))
    assert ei.value.action == "FIX_INPUT"
    with pytest.raises(InvalidArgument) as ei:
        client.execute([Op.put(Key([ns, "a"]), b"1"), Op.put(Key([ns, "b"]), b"2")])
    assert ei.value.kind == "multiple_major_paths"
    with pytest.raises(TypeError):
        client.put(Key([ns]), "text")
    with pytest.raises(InvalidArgument) as ei:  # a lone surrogate is not valid UTF-8
        client.put(Key([ns], ["\udcff"]), b"x")
    assert ei.value.kind == "invalid_key" and "minor component 0" in str(ei.value)


def test_multi_get_range_depth(client, ns):
    base = Key([ns, "u"])
    client.put(base, b"parent")
    for m in ["a", "b", "c", "d"]:
        client.put(base.child(m), m.encode())
        client.put(base.child(m, "deep"), b"deep-" + m.encode())
    recs = client.multi_get(base)
    assert len(recs) == 9 and recs[0].key == base
    kids = client.multi_get(base, depth=Depth.CHILDREN_ONLY)
    assert [r.value for r in kids] == [b"a", b"b", b"c", b"d"]
    assert len(client.multi_get(base, depth=Depth.PARENT_AND_CHILDREN)) == 5
    assert len(client.multi_get(base, depth=Depth.DESCENDANTS_ONLY)) == 8
    rng = client.multi_get(base, range=KeyRange.between("b", "c"), depth=Depth.CHILDREN_ONLY)
    assert [r.value for r in rng] == [b"b", b"c"]
    rng = client.multi_get(base, range=KeyRange.between("b", "d", end_inclusive=False), depth=Depth.CHILDREN_ONLY)
    assert [r.value for r in rng] == [b"b", b"c"]
    assert [r.value for r in client.multi_get(base, range=KeyRange.prefix("c"), depth=Depth.CHILDREN_ONLY)] == [b"c"]
    assert len(client.multi_get(base, range=KeyRange.from_("c"))) == 5  # the parent, c, c/deep, d, d/deep
    assert len(client.multi_get(base, range=KeyRange.to("a"))) == 3
    keys = client.multi_get(base, keys_only=True, depth=Depth.CHILDREN_ONLY)
    assert [r.key.minor for r in keys] == [("a",), ("b",), ("c",), ("d",)] and all(r.value is None for r in keys)
    assert client.multi_delete(base, range=KeyRange.prefix("a"), depth=Depth.DESCENDANTS_ONLY) == 2
    assert client.multi_delete(base, depth=Depth.DESCENDANTS_ONLY) == 6
    assert [r.key for r in client.multi_get(base)] == [base]


def test_multi_get_iterator_pages_lazily(client, ns):
    base = Key([ns])
    for i in range(25):
        client.put(base.child(f"{i:03d}"), b"x")
    it = client.multi_get_iterator(base, batch_size=10)
    first = next(it)  # one page fetched
    assert first.key.minor == ("000",)
    # A record written after the first page, beyond it, is seen by a later page.
    client.put(base.child("024a"), b"late")
    rest = list(it)
    assert len(rest) == 25 and rest[-1].key.minor == ("024a",)
    rev = [r.key.minor[0] for r in client.multi_get_iterator(base, direction=Direction.REVERSE, batch_size=7)]
    assert rev[0] == "024a" and rev[-1] == "000" and len(rev) == 26


def test_store_iterator(client, ns):
    for i in range(30):
        client.put(Key([ns, str(i)], ["m"]), str(i).encode())
    got = {r.key.major[1] for r in client.store_iterator(batch_size=7) if r.key.major[0] == ns}
    assert got == {str(i) for i in range(30)}
    scoped = list(client.store_iterator(Key([ns]), batch_size=4, keys_only=True))
    assert len(scoped) == 30 and all(r.value is None for r in scoped)


def test_execute(client, ns):
    m = [ns, "acct"]
    res = client.execute([Op.put(Key(m, ["a"]), b"1"), Op.put(Key(m, ["b"]), b"2"),
                          Op.put_if_absent(Key(m, ["c"]), b"3").with_ttl(datetime.timedelta(hours=1))])
    assert [r.done for r in res] == [True, True, True] and all(r.version for r in res)
    va = res[0].version
    res = client.execute([Op.put_if_version(Key(m, ["a"]), b"1b", va), Op.delete(Key(m, ["b"])),
                          Op.put_if_absent(Key(m, ["c"]), b"x")])
    assert [r.done for r in res] == [True, True, False]
    with pytest.raises(ExecutionAborted) as ei:
        client.execute([Op.put(Key(m, ["d"]), b"4"),
                        Op.put_if_absent(Key(m, ["c"]), b"x").abort_if_unsuccessful().returning(ReturnChoice.VALUE)])
    assert ei.value.index == 1 and not ei.value.result.done and ei.value.result.previous.value == b"3"
    assert client.get(Key(m, ["d"])) is None  # nothing of the aborted batch was written
    assert client.execute([Op.delete_if_version(Key(m, ["a"]), b"\x00" * 16)])[0].done is False
    assert client.get(Key(m, ["a"])).value == b"1b"


def test_put_many(client, ns):
    recs = [(Key([ns, str(i % 7)], [str(i)]), b"v" * 100) for i in range(250)]
    recs.append((Key([ns, "0"], ["big"]), b"x" * 65537))  # refused: its batch is retried record by record
    res = client.put_many(recs, max_in_flight=4)
    assert len(res) == 251
    assert all(isinstance(r, Version) for r in res[:250])
    assert isinstance(res[250], LimitExceeded)
    for i in (0, 100, 249):
        assert client.get(recs[i][0]).version == res[i]
    assert client.put_many([]) == []


@pytest.mark.parametrize("kind,action,maybe,again", [
    ("dropped", "RETRY", False, True),            # a leader change dropped it: not applied
    ("partition_moving", "RETRY", False, True),
    ("wrong_shard", "REFRESH", False, True),
    ("not_leader", "REFRESH", False, True),
    ("outcome_unknown", "NONE", True, False),     # maybe applied: never sent twice
    ("ack_timeout", "RETRY", True, False),
    ("limit_exceeded", "FIX_INPUT", False, False),
    ("disk_full", "RETRY", False, False),
])
def test_put_many_resends_what_passes(kind, action, maybe, again):
    from cairn.client import _resendable
    e = CairnError(kind, code=grpc.StatusCode.UNAVAILABLE, kind=kind, action=action, maybe_applied=maybe)
    assert _resendable(e) is again


def test_timeout_per_call(client, ns):
    k = Key([ns])
    client.put(k, b"x", timeout=datetime.timedelta(seconds=1))
    assert client.get(k, timeout=0.5).value == b"x"


def test_closed_client(lite):
    c = Client([lite.addr], store=STORE)
    c.close()
    c.close()
    with pytest.raises(CairnError) as ei:
        c.get(Key(["x"]))
    assert ei.value.code == grpc.StatusCode.CANCELLED and not ei.value.retryable


def test_store_mismatch(lite):
    with pytest.raises(StoreMismatch) as ei:
        Client([lite.addr], store="other")
    assert ei.value.action == "FIX_INPUT"


def test_unreachable_host_is_unavailable(lite):
    with pytest.raises(Unavailable) as ei:
        Client(["127.0.0.1:1"], store=STORE, timeout=0.5)
    assert ei.value.retryable


def test_restart_reads_retry(cairn_bin, tmp_path, ns):
    # A read on a lite that restarts on the same port is retried until it answers.
    lt = start_lite(cairn_bin, str(tmp_path))
    c = Client([lt.addr], store=STORE, timeout=10)
    k = Key([ns])
    c.put(k, b"x")
    stop_lite(lt)
    port = lt.addr.rsplit(":", 1)[1]
    with pytest.raises(Unavailable):
        c.get(k, timeout=0.3)
    lt2 = _start_on_port(cairn_bin, str(tmp_path), port)
    try:
        assert c.get(k, timeout=10).value == b"x"
        assert c.put(k, b"y", timeout=10)
    finally:
        c.close()
        stop_lite(lt2)


def _start_on_port(cairn_bin, root, port):
    import re
    import subprocess
    p = subprocess.Popen([cairn_bin, "lite", "--root", root, "--port", port, "--partitions", "10"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = p.stdout.readline()
    assert re.search(r"ready at", line), line
    from conftest import Lite
    return Lite(f"127.0.0.1:{port}", root, p)


def test_secure_lite(cairn_bin, tmp_path):
    """A secure lite (TLS 1.3): the client with the login file or the CA
    works; without them it is refused with a message naming secure mode."""
    (tmp_path / "s").mkdir()
    lt = start_lite(cairn_bin, str(tmp_path / "s"), "--secure")
    try:
        login = str(tmp_path / "s" / "security" / "client.security")
        with Client([lt.addr], store=STORE, security=login) as c:
            v = c.put(Key.parse("/sec/-/a"), b"hello")
            rec = c.get(Key.parse("/sec/-/a"))
            assert rec is not None and rec.value == b"hello" and rec.version == v
        ca = str(tmp_path / "s" / "security" / "ca.pem")
        pw = (tmp_path / "s" / "security" / "admin.passwd").read_text().strip()
        with Client([lt.addr], store=STORE, ca_file=ca, user="admin", password=pw) as c:
            assert c.get(Key.parse("/sec/-/a")).value == b"hello"
        # TLS without a login: refused, told to log in.
        with pytest.raises(CairnError) as e:
            Client([lt.addr], store=STORE, ca_file=ca, timeout=3)
        assert e.value.kind == "login_required" and "login" in str(e.value)
        # A wrong password.
        with pytest.raises(CairnError) as e:
            Client([lt.addr], store=STORE, ca_file=ca, user="admin", password="wrong-password", timeout=3)
        assert e.value.kind == "login_failed"
        with pytest.raises(CairnError) as e:
            Client([lt.addr], store=STORE, timeout=3)
        assert "secure mode" in str(e.value)
        with pytest.raises(InvalidArgument):
            Client([lt.addr], store=STORE, security=str(tmp_path / "missing.security"))
    finally:
        stop_lite(lt)
