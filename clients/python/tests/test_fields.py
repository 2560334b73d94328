"""Field records and server-side merges against a real ``cairn lite``."""

import pytest

from cairn import InvalidArgument, Key, LimitExceeded, decode_fields, encode_fields


def test_codec_matches_go_golden():
    # The bytes api/fieldrec (Go) writes for field0="a", field1=b"" .
    assert encode_fields([("field0", b"a"), ("field1", b"")]) == bytes.fromhex("0102066669656c6430016106666965" "6c643100")
    assert decode_fields(encode_fields({"n": b"\xff" * 300})) == [("n", b"\xff" * 300)]
    for bad in [b"", b"\x02\x00", b"\x01\x01\x05ab", b"\x01\x00\x00", b"\x01\x81\x00"]:
        with pytest.raises(ValueError):
            decode_fields(bad)
    with pytest.raises(ValueError):
        encode_fields([("a", b"1"), ("a", b"2")])


def test_merge_and_update(client, ns):
    k = Key([ns, "rec"])
    r = client.update_fields(k, {"a": b"1"})
    assert not r.done and client.get(k) is None
    client.merge_fields(k, {"a": b"1", "b": b"2"})
    r = client.update_fields(k, [("c", b"3"), ("a", b"one")])
    assert r.done
    rec = client.get(k)
    assert rec.version == r.version
    assert decode_fields(rec.value) == [("a", b"one"), ("b", b"2"), ("c", b"3")]


def test_merge_refusals(client, ns):
    plain = Key([ns, "plain"])
    client.put(plain, b"text")
    with pytest.raises(InvalidArgument) as e:
        client.merge_fields(plain, {"a": b"1"})
    assert e.value.kind == "not_field_record"
    assert client.get(plain).value == b"text"
    big = Key([ns, "big"])
    half = client.store_info().limits.max_value_bytes * 3 // 4
    client.merge_fields(big, {"a": b"x" * half})
    with pytest.raises(LimitExceeded):  # each update fits; the merged record would not
        client.merge_fields(big, {"b": b"y" * half})
    assert decode_fields(client.get(big).value) == [("a", b"x" * half)]
