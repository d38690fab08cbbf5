"""Row count and an order-independent checksum: what a rewrite must preserve.

The checksum is the sum over all rows of ``xxhash64`` of all columns: the same multiset of
rows gives the same value whatever the order or the file split, and a lost, duplicated or
altered row changes it. The sum is exact: each 64-bit hash is split into its signed high
and unsigned low 32 bits, each summed as a ``bigint`` (no overflow below 2^31 rows), and
the two sums are recombined on the driver. Summing the hash as a ``decimal(20,0)`` (the
same value) would make Spark add BigDecimals row by row, several times slower.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

from engine.workload.sql.render import spark_identifier

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame


def _q(column: str) -> str:
    return spark_identifier(column)


def checksum_exprs(columns: Sequence[str]) -> list["Column"]:
    """Aggregates ``n`` (rows), ``h_hi`` and ``h_lo`` (the checksum's two halves)."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    h = F.xxhash64(*[F.col(_q(c)) for c in columns])
    return [F.count(F.lit(1)).alias("n"),
            F.sum(F.shiftright(h, 32)).alias("h_hi"),
            F.sum(h.bitwiseAND(F.lit(0xFFFFFFFF))).alias("h_lo")]


def format_checksum(row: Mapping[str, Any]) -> tuple[int, str]:
    """(rows, checksum) from the aggregates of :func:`checksum_exprs`.

    Example (two rows hashing to -1 and 2**32 + 5 sum to 2**32 + 4):
    >>> format_checksum({"n": 2, "h_hi": -1 + 1, "h_lo": 0xFFFFFFFF + 5})
    (2, '4294967300')
    """
    total = int(row["h_hi"] or 0) * (1 << 32) + int(row["h_lo"] or 0)
    return int(row["n"] or 0), str(total)


def content_checksum(df: "DataFrame") -> tuple[int, str]:
    """(row count, order-independent checksum) of a DataFrame (one Spark job)."""
    return format_checksum(df.agg(*checksum_exprs(df.columns)).collect()[0].asDict())
