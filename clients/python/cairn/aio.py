"""An asyncio face for the Cairn client.

    import asyncio
    from cairn import Key
    from cairn.aio import AsyncClient

    async def main() -> None:
        async with AsyncClient(["127.0.0.1:5000"], store="kvstore") as c:
            v = await c.put(Key.parse("/users/alice/-/email"), b"alice@example.com")
            rec = await c.get(Key.parse("/users/alice/-/email"))
            async for r in c.multi_get_iterator(Key.parse("/users/alice")):
                print(r.key, r.value)

    asyncio.run(main())

Every method has the signature, the routing, the retries and the errors of
the same method of ``cairn.Client``: each call runs the blocking client's
call on a thread pool of the AsyncClient's own (``max_workers`` threads,
so a slow store cannot starve the event loop's default executor), and gRPC
releases the GIL while it waits, so many calls are in flight at once. An
iterator fetches a page at a time on the pool and yields its records on the
loop. This is the cheap variant the design asked for: one routing and retry
implementation, shared with the blocking client, rather than a second one
written on grpc.aio.
"""

import asyncio
import concurrent.futures
import functools
import itertools
from typing import Any, AsyncIterator, Callable, Iterator, List, Optional, Sequence, TypeVar

from .client import DEFAULT_BATCH_SIZE, Client
from .keys import Key
from .types import Record, Result, StoreInfo

T = TypeVar("T")


class AsyncClient:
    """The asyncio client. Construct it like ``cairn.Client`` (the keyword
    arguments are passed on), use it from one event loop, and close it with
    ``await c.close()`` or ``async with``."""

    def __init__(self, hosts: Sequence[str], *, max_workers: int = 32, **kwargs: Any) -> None:
        self._c = Client(hosts, **kwargs)
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="cairn-aio")

    @property
    def sync(self) -> Client:
        """The blocking client underneath (thread-safe, shares the connections)."""
        return self._c

    async def _run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, functools.partial(fn, *args, **kwargs))

    async def close(self) -> None:
        await self._run(self._c.close)
        self._pool.shutdown(wait=False)

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def store_info(self, **kw: Any) -> StoreInfo:
        return await self._run(self._c.store_info, **kw)

    async def get(self, key: Key, **kw: Any) -> Optional[Record]:
        return await self._run(self._c.get, key, **kw)

    async def put(self, key: Key, value: bytes, **kw: Any) -> Any:
        return await self._run(self._c.put, key, value, **kw)

    async def put_if_absent(self, key: Key, value: bytes, **kw: Any) -> Result:
        return await self._run(self._c.put_if_absent, key, value, **kw)

    async def put_if_present(self, key: Key, value: bytes, **kw: Any) -> Result:
        return await self._run(self._c.put_if_present, key, value, **kw)

    async def put_if_version(self, key: Key, value: bytes, match: bytes, **kw: Any) -> Result:
        return await self._run(self._c.put_if_version, key, value, match, **kw)

    async def delete(self, key: Key, **kw: Any) -> Result:
        return await self._run(self._c.delete, key, **kw)

    async def delete_if_version(self, key: Key, match: bytes, **kw: Any) -> Result:
        return await self._run(self._c.delete_if_version, key, match, **kw)

    async def execute(self, ops: Sequence[Any], **kw: Any) -> List[Result]:
        return await self._run(self._c.execute, ops, **kw)

    async def multi_get(self, parent: Key, **kw: Any) -> List[Record]:
        return await self._run(self._c.multi_get, parent, **kw)

    async def multi_delete(self, parent: Key, **kw: Any) -> int:
        return await self._run(self._c.multi_delete, parent, **kw)

    async def put_many(self, records: Any, max_in_flight: int = 8, **kw: Any) -> Any:
        return await self._run(self._c.put_many, records, max_in_flight, **kw)

    def multi_get_iterator(self, parent: Key, **kw: Any) -> AsyncIterator[Record]:
        """The records under parent, a page at a time (see Client.multi_get_iterator)."""
        return self._pages(self._c.multi_get_iterator(parent, **kw), kw.get("batch_size", DEFAULT_BATCH_SIZE))

    def store_iterator(self, parent: Optional[Key] = None, **kw: Any) -> AsyncIterator[Record]:
        """Every record in the store, or under parent (see Client.store_iterator)."""
        return self._pages(self._c.store_iterator(parent, **kw), kw.get("batch_size", DEFAULT_BATCH_SIZE))

    async def _pages(self, gen: Iterator[Record], batch: int) -> AsyncIterator[Record]:
        # The blocking generator fetches a page when its buffer runs dry;
        # taking a page's worth per hop keeps that fetch off the loop.
        take = functools.partial(lambda g, n: list(itertools.islice(g, n)), gen, max(batch, 1))
        while True:
            chunk = await self._run(take)
            for r in chunk:
                yield r
            if not chunk:
                return
