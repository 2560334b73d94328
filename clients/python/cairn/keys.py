"""Keys, versions, key ranges, and how a major path hashes to a partition.

The string form and the hash are those of Cairn's internal/keys package
(Go); api/testdata/keys.json holds vectors that both test suites check.

String form::

    /major1/major2/-/minor1/minor2

Components are separated by '/'. A component that is exactly "-" separates
the major path from the minor path. Inside a component '%' and '/' are
written %25 and %2F, a component that is exactly "-" is written %2D, and
bytes below 0x20, 0x7F and bytes that are not part of valid UTF-8 are
written %XX. ``Key.parse`` accepts %XX for any byte.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence, Tuple

import xxhash

from .errors import CairnError, InvalidArgument

__all__ = ["Key", "Version", "KeyRange", "Depth", "Direction", "hash_major", "partition_of"]

_HEX = "0123456789ABCDEF"


def _escape(c: str) -> str:
    if c == "-":
        return "%2D"
    out = []
    for ch in c:
        o = ord(ch)
        if ch == "%" or ch == "/" or o < 0x20 or o == 0x7F:
            out.append("%" + _HEX[o >> 4] + _HEX[o & 15])
        elif 0xD800 <= o <= 0xDFFF:
            # A lone surrogate (from surrogateescape) is not valid UTF-8:
            # print its bytes escaped, as Go prints invalid bytes.
            for b in ch.encode("utf-8", "surrogateescape"):
                out.append("%" + _HEX[b >> 4] + _HEX[b & 15])
        else:
            out.append(ch)
    return "".join(out)


def _unescape(raw: str, text: str) -> str:
    if "%" not in raw:
        return raw
    out = bytearray()
    b = raw.encode("utf-8")
    i = 0
    while i < len(b):
        if b[i] != 0x25:  # '%'
            out.append(b[i])
            i += 1
            continue
        if i + 2 >= len(b):
            raise _malformed(f"{text!r}: truncated escape at byte {i}")
        try:
            out.append(int(b[i + 1 : i + 3].decode("ascii"), 16))
        except (ValueError, UnicodeDecodeError):
            raise _malformed(f"{text!r}: bad escape {b[i:i+3]!r}") from None
        i += 3
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError:
        raise _malformed(f"{text!r}: component is not valid UTF-8") from None


def _malformed(msg: str) -> CairnError:
    return InvalidArgument(f"malformed key: {msg}", kind="malformed_key", action="FIX_INPUT")


@dataclass(frozen=True)
class Key:
    """A record key: a major path (one or more components) and a minor path.

    Records with the same major path live in the same partition, and one
    ``execute`` may write several of them atomically.

    >>> k = Key.parse("/users/alice/-/email")
    >>> k.major, k.minor
    (('users', 'alice'), ('email',))
    >>> str(Key(["a/b", "-"], ["x"]))
    '/a%2Fb/%2D/-/x'
    """

    major: Tuple[str, ...]
    minor: Tuple[str, ...] = ()

    def __init__(self, major: Iterable[str], minor: Iterable[str] = ()) -> None:
        if isinstance(major, str) or isinstance(minor, str):
            raise TypeError("Key(major, minor) takes sequences of components; use Key.parse for a string form")
        object.__setattr__(self, "major", tuple(major))
        object.__setattr__(self, "minor", tuple(minor))

    @classmethod
    def parse(cls, text: str) -> "Key":
        """Reads a key in its string form; raises InvalidArgument (kind
        malformed_key) for text that is not one."""
        if text == "":
            raise _malformed("empty string (a key looks like /major/-/minor)")
        if text[0] != "/":
            raise _malformed(f"{text!r} does not start with '/'")
        if text == "/":
            raise _malformed('"/" is the root of the store and names no record (a scan takes it to mean the whole store)')
        major: list = []
        minor: list = []
        in_minor = False
        for i, raw in enumerate(text[1:].split("/")):
            if raw == "":
                raise _malformed(f"{text!r}: component {i + 1} is empty (a doubled or trailing '/'); components are never empty")
            if raw == "-":
                if in_minor:
                    raise _malformed(f'{text!r} has more than one \'-\' separator (write a "-" component as %2D)')
                in_minor = True
                continue
            (minor if in_minor else major).append(_unescape(raw, text))
        if not major:
            raise _malformed(f"{text!r} has an empty major path")
        return cls(major, minor)

    def __str__(self) -> str:
        s = "".join("/" + _escape(c) for c in self.major)
        if self.minor:
            s += "/-" + "".join("/" + _escape(c) for c in self.minor)
        return s

    def __repr__(self) -> str:
        return f"Key.parse({str(self)!r})"

    @property
    def major_key(self) -> "Key":
        """The key of the major path alone (no minor components)."""
        return Key(self.major)

    def child(self, *components: str) -> "Key":
        """This key with components appended to its minor path."""
        return Key(self.major, self.minor + components)


class Version(bytes):
    """A record's version: opaque bytes, printed as lowercase hex.

    Compare versions only for equality; use one for put_if_version,
    delete_if_version or a VERSION consistency.
    """

    def __str__(self) -> str:
        return self.hex()

    def __repr__(self) -> str:
        return f"Version({self.hex()!r})"

    @classmethod
    def parse(cls, text: str) -> "Version":
        """Reads a version printed by str()."""
        try:
            b = bytes.fromhex(text)
        except ValueError:
            b = b""
        if not b:
            raise InvalidArgument(f"version {text!r} is not a non-empty hex string",
                                  kind="malformed_version", action="FIX_INPUT")
        return cls(b)


class Depth(enum.IntEnum):
    """Which records under a parent key an operation touches."""

    CHILDREN_ONLY = 1
    PARENT_AND_CHILDREN = 2
    DESCENDANTS_ONLY = 3
    PARENT_AND_DESCENDANTS = 4  # the default


class Direction(enum.IntEnum):
    """Order of a multi_get_iterator's records."""

    FORWARD = 1
    REVERSE = 2


@dataclass(frozen=True)
class KeyRange:
    """Restricts the component right after the parent key: either a prefix,
    or optional start and end bounds (each inclusive or not).

    >>> KeyRange.between("a", "m")          # [a, m]
    >>> KeyRange.prefix("ph")
    """

    start: Optional[str] = None
    start_inclusive: bool = True
    end: Optional[str] = None
    end_inclusive: bool = True
    prefix_: Optional[str] = None

    @classmethod
    def between(cls, start: str, end: str, start_inclusive: bool = True, end_inclusive: bool = True) -> "KeyRange":
        return cls(start=start, start_inclusive=start_inclusive, end=end, end_inclusive=end_inclusive)

    @classmethod
    def from_(cls, start: str, inclusive: bool = True) -> "KeyRange":
        return cls(start=start, start_inclusive=inclusive)

    @classmethod
    def to(cls, end: str, inclusive: bool = True) -> "KeyRange":
        return cls(end=end, end_inclusive=inclusive)

    @classmethod
    def prefix(cls, p: str) -> "KeyRange":
        return cls(prefix_=p)


def _component_bytes(c: str) -> bytes:
    return c.encode("utf-8", "surrogateescape")


def hash_major(major: Sequence[str]) -> int:
    """The 64-bit hash of a major path, as internal/keys.Hash computes it:
    xxhash64 (seed 0) of each component with 0x00 written 00 FF, followed
    by 00 01."""
    b = bytearray()
    for c in major:
        b += _component_bytes(c).replace(b"\x00", b"\x00\xff")
        b += b"\x00\x01"
    return xxhash.xxh64_intdigest(bytes(b))


def partition_of(h: int, partitions: int) -> int:
    """The partition that owns hash h in a store of ``partitions``
    partitions: the high 64 bits of h * partitions (keys.PartitionOf)."""
    return (h * partitions) >> 64
