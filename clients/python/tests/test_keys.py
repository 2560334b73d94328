"""The shared key vectors (api/testdata/keys.json), also checked by
internal/keys's TestSharedVectors in Go: string form, parsing, xxhash64 of
the major path and the partition per count."""

import json
import os

import pytest

from cairn import InvalidArgument, Key, Version, hash_major, partition_of

VECTORS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "api", "testdata", "keys.json")


def load():
    with open(VECTORS) as f:
        return json.load(f)


def test_vectors_file_present():
    v = load()
    assert len(v["keys"]) >= 20 and len(v["parse"]) >= 10


@pytest.mark.parametrize("kv", load()["keys"], ids=lambda kv: kv["text"])
def test_key_vector(kv):
    k = Key(kv["major"], kv["minor"])
    assert str(k) == kv["text"]
    assert Key.parse(kv["text"]) == k
    h = hash_major(k.major)
    assert h == int(kv["hash"])
    for n, p in kv["partitions"].items():
        assert partition_of(h, int(n)) == p, f"partitions={n}"


@pytest.mark.parametrize("pv", load()["parse"], ids=lambda pv: repr(pv["input"]))
def test_parse_vector(pv):
    if "text" not in pv:
        with pytest.raises(InvalidArgument) as ei:
            Key.parse(pv["input"])
        assert ei.value.kind == "malformed_key"
        assert ei.value.action == "FIX_INPUT" and not ei.value.retryable
    else:
        assert str(Key.parse(pv["input"])) == pv["text"]


def test_key_api():
    k = Key.parse("/users/alice/-/email")
    assert k.major == ("users", "alice") and k.minor == ("email",)
    assert k.major_key == Key(["users", "alice"])
    assert k.major_key.child("phone") == Key(["users", "alice"], ["phone"])
    assert str(Key(["-"], ["a/b"])) == "/%2D/-/a%2Fb"
    assert hash(k) == hash(Key(["users", "alice"], ["email"]))
    with pytest.raises(TypeError):
        Key("users")


def test_version_hex():
    v = Version(bytes.fromhex("00ff10"))
    assert str(v) == "00ff10"
    assert Version.parse("00ff10") == v
    with pytest.raises(InvalidArgument):
        Version.parse("xyz")
    with pytest.raises(InvalidArgument):
        Version.parse("")
