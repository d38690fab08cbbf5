"""Spark's hash functions reproduced on the driver, so rows can be routed and tagged
without a Spark job.

* :func:`spark_hash_long` is ``hash(bigint)`` (Murmur3, the hash partitioner's function):
  :func:`hash_targets` finds, per shuffle partition ``i``, a value that Spark sends there.
* :func:`xxhash64` is ``xxhash64(string)``: :class:`PathLookup` maps each row's
  ``_metadata.file_path`` to its input file through a table of those hashes, so ONE scan
  of all the plan's files tags every row with its group, where a
  union of one scan per group made at least one task per group, twice.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from pyspark.sql import Column

_M64 = 0xFFFFFFFFFFFFFFFF
_P1, _P2, _P3, _P4, _P5 = (11400714785074694791, 14029467366897019727, 1609587929392839161,
                           9650029242287828579, 2870177450012600261)


# -- Murmur3 (Spark's hash partitioner) ---------------------------------------------------
def _mix_k1(k1: int) -> int:
    k1 = (k1 * 0xCC9E2D51) & 0xFFFFFFFF
    k1 = ((k1 << 15) | (k1 >> 17)) & 0xFFFFFFFF
    return (k1 * 0x1B873593) & 0xFFFFFFFF


def _mix_h1(h1: int, k1: int) -> int:
    h1 ^= k1
    h1 = ((h1 << 13) | (h1 >> 19)) & 0xFFFFFFFF
    return (h1 * 5 + 0xE6546B64) & 0xFFFFFFFF


def spark_hash_long(value: int, seed: int = 42) -> int:
    """Spark's ``hash(bigint)`` (Murmur3_x86_32.hashLong, seed 42) as a signed int.

    Example:
    >>> spark_hash_long(0), spark_hash_long(1)
    (-1670924195, -1712319331)
    """
    v = value & _M64
    h1 = _mix_h1(seed & 0xFFFFFFFF, _mix_k1(v & 0xFFFFFFFF))
    h1 = _mix_h1(h1, _mix_k1(v >> 32))
    h1 ^= 8
    h1 ^= h1 >> 16
    h1 = (h1 * 0x85EBCA6B) & 0xFFFFFFFF
    h1 ^= h1 >> 13
    h1 = (h1 * 0xC2B2AE35) & 0xFFFFFFFF
    h1 ^= h1 >> 16
    return h1 - (1 << 32) if h1 >= 1 << 31 else h1


_TARGETS: dict[int, list[int]] = {}


def hash_targets(n: int) -> list[int]:
    """Integers ``v_i`` with ``pmod(hash(v_i), n) == i``: ``repartition(n, col)`` (Spark's
    hash partitioning) then sends the rows whose column is ``v_i`` to partition ``i``.
    Computed on the driver (no Spark job), cached per n.

    Example:
    >>> [spark_hash_long(v) % 3 for v in hash_targets(3)]
    [0, 1, 2]
    """
    if n not in _TARGETS:
        found: dict[int, int] = {}
        v = 0
        while len(found) < n:
            found.setdefault(spark_hash_long(v) % n, v)
            v += 1
        _TARGETS[n] = [found[i] for i in range(n)]
    return _TARGETS[n]


# -- xxHash64 (Spark's xxhash64 of a string) -----------------------------------------------
def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _M64


def _round(acc: int, lane: int) -> int:
    return (_rotl((acc + lane * _P2) & _M64, 31) * _P1) & _M64


def _stripes(data: bytes, seed: int) -> tuple[int, int]:
    """The 32-byte stripes of XXH64: (hash so far, bytes consumed)."""
    v = [(seed + _P1 + _P2) & _M64, (seed + _P2) & _M64, seed, (seed - _P1) & _M64]
    i = 0
    while i + 32 <= len(data):
        v = [_round(a, lane) for a, lane in zip(v, struct.unpack_from("<4Q", data, i))]
        i += 32
    h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _M64
    for a in v:
        h = ((h ^ _round(0, a)) * _P1 + _P4) & _M64
    return h, i


def xxhash64(text: str, seed: int = 42) -> int:
    """Spark's ``xxhash64(string)`` (XXH64 of the UTF-8 bytes, seed 42) as a signed long.

    Example (values Spark 4.0 returns for these strings):
    >>> xxhash64("file:/tmp/p%20q%23mmoqf0z4/a%20b%25c.parquet")
    -1517487708376928627
    >>> xxhash64("file:///tmp/p%20q%23mmoqf0z4/a%20b%25c.parquet")
    771355741023607756
    """
    return xxhash64_bytes(text.encode("utf-8"), seed)


def xxhash64_long(value: int, seed: int = 42) -> int:
    """Spark's ``xxhash64(bigint)`` with ``seed`` (XXH64 of the 8 little-endian bytes); a
    column list hashes each column with the previous column's hash as the seed.

    Example (``SELECT xxhash64(1L)`` in Spark 4.0):
    >>> xxhash64_long(1)
    -7001672635703045582
    """
    return xxhash64_bytes(struct.pack("<q", value), seed)


def xxhash64_int(value: int, seed: int = 42) -> int:
    """Spark's ``xxhash64(int)`` with ``seed`` (XXH64 of the 4 little-endian bytes)."""
    return xxhash64_bytes(struct.pack("<i", value), seed)


def xxhash64_bytes(data: bytes, seed: int = 42) -> int:
    """XXH64 of ``data`` as a signed long (Spark's hashes of strings, ints and longs)."""
    n = len(data)
    seed &= _M64
    h, i = _stripes(data, seed) if n >= 32 else ((seed + _P5) & _M64, 0)
    h = (h + n) & _M64
    while i + 8 <= n:
        h = (_rotl(h ^ _round(0, struct.unpack_from("<Q", data, i)[0]), 27) * _P1 + _P4) & _M64
        i += 8
    if i + 4 <= n:
        h = (_rotl(h ^ ((struct.unpack_from("<I", data, i)[0] * _P1) & _M64), 23) * _P2
             + _P3) & _M64
        i += 4
    for byte in data[i:]:
        h = (_rotl(h ^ ((byte * _P5) & _M64), 11) * _P1) & _M64
    h ^= h >> 33
    h = (h * _P2) & _M64
    h ^= h >> 29
    h = (h * _P3) & _M64
    h ^= h >> 32
    return h - (1 << 64) if h >= 1 << 63 else h


class PathLookup:
    """A hash table from a string's xxhash64 to a small integer, evaluated per row by
    Spark from literal arrays (O(layers) per row, no join, no Spark job).

    ``slots`` = the next power of two >= 2 x the entries; entries whose slots collide go
    to the next layer; a row whose hash is in no layer gets -1.

    Example:
    >>> t = PathLookup({"a": 0, "b": 1, "c": 2})
    >>> t.find(xxhash64("b")), t.find(xxhash64("z"))
    (1, -1)
    """

    def __init__(self, values: dict[str, int]) -> None:
        self.slots = 1
        while self.slots < 2 * max(1, len(values)):
            self.slots *= 2
        self.layers: list[tuple[list[int], list[int]]] = []
        for text, value in values.items():
            h = xxhash64(text)
            slot = h % self.slots
            for hashes, found in self.layers:
                if found[slot] < 0:
                    hashes[slot], found[slot] = h, value
                    break
            else:
                hashes, found = [0] * self.slots, [-1] * self.slots
                hashes[slot], found[slot] = h, value
                self.layers.append((hashes, found))

    def find(self, h: int) -> int:
        """The value stored for hash ``h`` (driver side; -1 if absent)."""
        slot = h % self.slots
        for hashes, found in self.layers:
            if found[slot] >= 0 and hashes[slot] == h:
                return found[slot]
        return -1

    def column(self, text: "Column") -> "Column":
        """The same lookup as a Spark expression over a string column."""
        from pyspark.sql import functions as F  # pyspark: costly import, deferred

        h = F.xxhash64(text)
        index = (F.pmod(h, F.lit(self.slots)) + 1).cast("int")
        expr = None
        for hashes, found in self.layers:
            hit = F.element_at(long_array(hashes), index) == h
            value = F.element_at(long_array(found), index)
            expr = F.when(hit, value) if expr is None else expr.when(hit, value)
        return (expr if expr is not None else F.lit(None)).otherwise(F.lit(-1)).cast("int")


def _long_literal(x: int) -> str:
    """A SQL bigint literal (the most negative long cannot be written as one)."""
    return f"{x}L" if x > -(1 << 63) else "(-9223372036854775807L - 1L)"


def long_array(values: Sequence[int]) -> "Column":
    """A literal ``array<bigint>`` as ONE expression (one call into the JVM, not one per
    element: tables of thousands of files stay cheap to build); constant-folded by Spark.

    Example:
    >>> _long_literal(5), _long_literal(-(1 << 63))
    ('5L', '(-9223372036854775807L - 1L)')
    """
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    if not values:
        return F.expr("CAST(array() AS array<bigint>)")
    return F.expr("array(" + ",".join(_long_literal(int(x)) for x in values) + ")")
