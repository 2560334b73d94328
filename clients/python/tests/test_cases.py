"""The shared semantics table (api/testdata/cases.json) through the Python
client, against a real cairn lite: the same outcomes, versions and error
kinds as the Go client, HTTP/JSON and the Java client."""

import json
import os
from typing import Any, Dict, List

import pytest

from cairn import Client, Depth, Key, KeyRange, Op
from cairn.errors import CairnError, ExecutionAborted

CASES_FILE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "api", "testdata", "cases.json")
with open(CASES_FILE, encoding="utf-8") as f:
    CASES: List[Dict[str, Any]] = json.load(f)["cases"]

DEPTHS = {"children_only": Depth.CHILDREN_ONLY, "parent_and_children": Depth.PARENT_AND_CHILDREN,
          "descendants_only": Depth.DESCENDANTS_ONLY, "parent_and_descendants": Depth.PARENT_AND_DESCENDANTS}


def tagged(tag: str, key: str) -> str:
    """The case's isolation: the first component gets the run's tag."""
    return "/" + tag + key[1:] if len(key) > 1 and key.startswith("/") else key


class Runner:
    def __init__(self, client: Client, tag: str) -> None:
        self.c = client
        self.tag = tag
        self.versions: Dict[str, bytes] = {}
        self.max_value = client.store_info().limits.max_value_bytes

    def key(self, s: str) -> Key:
        return Key.parse(tagged(self.tag, s))

    def value(self, st: Dict[str, Any]) -> bytes:
        vb = st.get("value_bytes", "")
        if vb == "max_value_bytes":
            return b"x" * self.max_value
        if vb == "max_value_bytes+1":
            return b"x" * (self.max_value + 1)
        assert vb == "", f"unknown value_bytes {vb!r}"
        return st.get("value", "").encode()

    def match(self, name: str) -> bytes:
        assert name in self.versions, f"version {name!r} was not saved"
        return self.versions[name]

    def op(self, st: Dict[str, Any]) -> Op:
        k, cond = self.key(st["key"]), st.get("if", "")
        if st["op"] == "put":
            v = self.value(st)
            o = {"": lambda: Op.put(k, v), "absent": lambda: Op.put_if_absent(k, v),
                 "present": lambda: Op.put_if_present(k, v),
                 "version": lambda: Op.put_if_version(k, v, self.match(st["version"]))}[cond]()
        else:
            o = Op.delete_if_version(k, self.match(st["version"])) if cond == "version" else Op.delete(k)
        return o.abort_if_unsuccessful() if st.get("abort_if_unsuccessful") else o

    def selection(self, st: Dict[str, Any]) -> Dict[str, Any]:
        kw: Dict[str, Any] = {}
        if "depth" in st:
            kw["depth"] = DEPTHS[st["depth"]]
        r = st.get("range")
        if r is not None:
            if "prefix" in r:
                kw["range"] = KeyRange.prefix(r["prefix"])
            else:
                kw["range"] = KeyRange(start=r.get("start"), start_inclusive=not r.get("start_exclusive", False),
                                       end=r.get("end"), end_inclusive=not r.get("end_exclusive", False))
        return kw

    def run(self, i: int, st: Dict[str, Any]) -> None:
        want = st["expect"]
        where = f"step {i} ({st['op']} {st.get('key', st.get('parent'))})"
        try:
            got = getattr(self, "do_" + st["op"])(st)
        except ExecutionAborted as e:
            assert want.get("aborted_at") == e.index, f"{where}: aborted at {e.index}, want {want}"
            return
        except CairnError as e:
            assert want.get("error") == e.kind, f"{where}: error {e.kind!r} ({e}), want {want}"
            return
        assert "error" not in want, f"{where}: succeeded ({got!r}), want error {want['error']}"
        assert "aborted_at" not in want, f"{where}: done ({got!r}), want aborted at {want['aborted_at']}"
        self.check(where, st, got)

    def do_put(self, st: Dict[str, Any]) -> Any:
        o = self.op(st)
        k, v, cond = o.key, self.value(st), st.get("if", "")
        if cond == "":
            return (True, self.c.put(k, v))
        r = {"absent": lambda: self.c.put_if_absent(k, v), "present": lambda: self.c.put_if_present(k, v),
             "version": lambda: self.c.put_if_version(k, v, self.match(st["version"]))}[cond]()
        return (r.done, r.version)

    def do_delete(self, st: Dict[str, Any]) -> Any:
        k = self.key(st["key"])
        r = self.c.delete_if_version(k, self.match(st["version"])) if st.get("if") == "version" else self.c.delete(k)
        return (r.done, None)

    def do_get(self, st: Dict[str, Any]) -> Any:
        return self.c.get(self.key(st["key"]))

    def do_multi_get(self, st: Dict[str, Any]) -> Any:
        return self.c.multi_get(self.key(st["parent"]), **self.selection(st))

    def do_multi_delete(self, st: Dict[str, Any]) -> Any:
        return self.c.multi_delete(self.key(st["parent"]), **self.selection(st))

    def do_execute(self, st: Dict[str, Any]) -> Any:
        return [r.done for r in self.c.execute([self.op(o) for o in st["ops"]])]

    def check(self, where: str, st: Dict[str, Any], got: Any) -> None:
        want, op = st["expect"], st["op"]
        if op in ("put", "delete"):
            done, version = got
            assert done == want["done"], f"{where}: done={done}, want {want['done']}"
            if "save" in st:
                self.versions[st["save"]] = version
        elif op == "get":
            if want.get("missing"):
                assert got is None, f"{where}: found {got}, want missing"
                return
            assert got is not None, f"{where}: missing"
            if "value" in want:
                assert got.value == want["value"].encode(), f"{where}: value {got.value!r}, want {want['value']!r}"
            if "version" in want:
                assert got.version == self.match(want["version"]), f"{where}: version differs from {want['version']}"
        elif op == "multi_get":
            keys = [str(r.key) for r in got]
            assert keys == [tagged(self.tag, k) for k in want["keys"]], f"{where}: keys {keys}, want {want['keys']}"
            if "values" in want:
                assert [r.value.decode() for r in got] == want["values"], f"{where}: values differ"
        elif op == "multi_delete":
            assert got == want["deleted"], f"{where}: deleted {got}, want {want['deleted']}"
        elif op == "execute":
            assert got == want["done"], f"{where}: done {got}, want {want['done']}"


@pytest.mark.parametrize("i,case", list(enumerate(CASES)), ids=[c["name"] for c in CASES])
def test_shared_case(client: Client, i: int, case: Dict[str, Any]) -> None:
    r = Runner(client, f"py{i}_{os.getpid()}_")
    for j, st in enumerate(case["steps"]):
        r.run(j, st)
