"""Cairn's Python client.

    from datetime import timedelta
    from cairn import Client, Key, Consistency

    c = Client(["127.0.0.1:5000"], store="kvstore")
    v = c.put(Key.parse("/users/alice/-/email"), b"alice@example.com")
    rec = c.get(Key.parse("/users/alice/-/email"))     # rec.value, rec.version; None when missing
    r = c.put_if_version(Key.parse("/users/alice/-/email"), b"new", v)   # r.done
    c.put(Key.parse("/sessions/s1"), b"x", ttl=timedelta(minutes=30))
    for rec in c.multi_get_iterator(Key.parse("/users/alice")):
        print(rec.key, rec.value)

Against a replicated store the client routes each request as the Go client
does (client/route.go): it hashes the major path (xxhash64) to a partition,
finds the partition's shard in the topology from StoreInfo, and sends writes
and ABSOLUTE reads to the shard leader, other reads round robin over its
replicas. It follows not_leader hints and wrong_shard moves, refreshes a
stale topology, and retries only what was certainly not applied.
"""

from .client import Client
from .errors import (CairnError, ConsistencyTimeout, DiskFull, ExecutionAborted, InvalidArgument, LimitExceeded,
                     MaybeApplied, StoreMismatch, Timeout, Unavailable)
from .fields import decode_fields, encode_fields
from .keys import Depth, Direction, Key, KeyRange, Version, hash_major, partition_of
from .types import (AckPolicy, Consistency, Durability, Limits, Op, Record, Result, ReturnChoice, StoreInfo,
                    SyncPolicy)

__version__ = "0.1.0"

__all__ = [
    "Client", "Key", "Version", "KeyRange", "Depth", "Direction", "hash_major", "partition_of",
    "Consistency", "Durability", "SyncPolicy", "AckPolicy", "ReturnChoice", "Record", "Result", "Limits",
    "StoreInfo", "Op", "encode_fields", "decode_fields",
    "CairnError", "InvalidArgument", "LimitExceeded", "Unavailable", "Timeout", "ConsistencyTimeout",
    "DiskFull", "StoreMismatch", "MaybeApplied", "ExecutionAborted",
]
