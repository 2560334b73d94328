"""cairn.aio.AsyncClient against a real cairn lite."""

import asyncio

import pytest

from cairn import InvalidArgument, Key, Op
from cairn.aio import AsyncClient
from cairn.errors import ExecutionAborted

from conftest import STORE, Lite


def run(coro):  # type: ignore[no-untyped-def]
    return asyncio.run(asyncio.wait_for(coro, timeout=60))


def test_aio_roundtrip_and_concurrency(lite: Lite, ns: str) -> None:
    async def main() -> None:
        async with AsyncClient([lite.addr], store=STORE, max_workers=8) as c:
            keys = [Key([ns, str(i)], ["f"]) for i in range(200)]
            versions = await asyncio.gather(*(c.put(k, str(i).encode()) for i, k in enumerate(keys)))
            assert len(set(versions)) == 200
            recs = await asyncio.gather(*(c.get(k) for k in keys))
            assert [r.value for r in recs if r] == [str(i).encode() for i in range(200)]
            assert await c.get(Key([ns, "missing"])) is None
            r = await c.put_if_version(keys[0], b"new", versions[1])
            assert not r.done
            r = await c.put_if_version(keys[0], b"new", versions[0])
            assert r.done and r.version
            assert (await c.delete(keys[1])).done
            info = await c.store_info()
            assert info.store == STORE
    run(main())


def test_aio_iterators_page(lite: Lite, ns: str) -> None:
    async def main() -> None:
        async with AsyncClient([lite.addr], store=STORE) as c:
            parent = Key([ns])
            await c.execute([Op.put(Key([ns], [f"m{i:03d}"]), b"v") for i in range(25)])
            got = [str(r.key) async for r in c.multi_get_iterator(parent, batch_size=4)]
            assert got == [f"/{ns}/-/m{i:03d}" for i in range(25)]
            scanned = [r async for r in c.store_iterator(parent, batch_size=3)]
            assert len(scanned) == 25
            assert await c.multi_delete(parent) == 25
            assert [r async for r in c.multi_get_iterator(parent)] == []
    run(main())


def test_aio_errors_are_typed(lite: Lite, ns: str) -> None:
    async def main() -> None:
        async with AsyncClient([lite.addr], store=STORE) as c:
            k = Key([ns], ["x"])
            await c.put(k, b"1")
            with pytest.raises(ExecutionAborted) as ei:
                await c.execute([Op.put(Key([ns], ["y"]), b"2"), Op.put_if_absent(k, b"3").abort_if_unsuccessful()])
            assert ei.value.index == 1
            assert (await c.get(Key([ns], ["y"]))) is None
            with pytest.raises(InvalidArgument) as e2:
                await c.put(Key([ns, ""]), b"x")
            assert e2.value.kind == "invalid_key" and not e2.value.retryable
    run(main())
