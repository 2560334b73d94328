"""Field records: a value format Cairn's server understands, so that a write
can change some fields of a record in one round trip, without reading it
(``Client.merge_fields`` and ``Client.update_fields``). It is the format
drawn in api/fieldrec (Go)::

    0x01 | uvarint nfields | nfields x (uvarint len(name) | name | uvarint len(v) | v)

Names are UTF-8 text, values bytes; fields keep their order.
"""

from __future__ import annotations

from typing import Iterable, List, Mapping, Tuple, Union

VERSION = 0x01

Fields = Union[Mapping[str, bytes], Iterable[Tuple[str, bytes]]]


def _uvarint(n: int, out: bytearray) -> None:
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


def encode_fields(fields: Fields) -> bytes:
    """``fields`` (a mapping or (name, value) pairs, in order) as a field record."""
    items = list(fields.items()) if isinstance(fields, Mapping) else list(fields)
    out = bytearray([VERSION])
    _uvarint(len(items), out)
    seen = set()
    for name, value in items:
        if not isinstance(name, str):
            raise TypeError(f"a field name is str, not {type(name).__name__}")
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise TypeError(f"field {name!r}: a value is bytes, not {type(value).__name__}")
        if name in seen:
            raise ValueError(f"field {name!r} appears twice")
        seen.add(name)
        n = name.encode("utf-8")
        _uvarint(len(n), out)
        out += n
        _uvarint(len(value), out)
        out += bytes(value)
    return bytes(out)


def _read_uvarint(b: bytes, i: int) -> Tuple[int, int]:
    n, shift, start = 0, 0, i
    while True:
        if i >= len(b) or shift > 63:
            raise ValueError("not a field record: truncated")
        c = b[i]
        i += 1
        n |= (c & 0x7F) << shift
        if c < 0x80:
            break
        shift += 7
    if i - start > 1 and b[i - 1] == 0:
        raise ValueError("not a field record: a length is not minimally encoded")
    return n, i


def decode_fields(b: bytes) -> List[Tuple[str, bytes]]:
    """The (name, value) pairs of a field record, in order; ValueError if ``b`` is not one."""
    if not b or b[0] != VERSION:
        raise ValueError("not a field record: wrong format byte")
    count, i = _read_uvarint(b, 1)
    out: List[Tuple[str, bytes]] = []
    for _ in range(count):
        parts = []
        for _part in range(2):
            n, i = _read_uvarint(b, i)
            if n > len(b) - i:
                raise ValueError("not a field record: truncated")
            parts.append(bytes(b[i:i + n]))
            i += n
        out.append((parts[0].decode("utf-8"), parts[1]))
    if i != len(b):
        raise ValueError(f"not a field record: {len(b) - i} trailing bytes")
    return out
