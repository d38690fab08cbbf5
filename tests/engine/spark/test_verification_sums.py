"""The verification's hash sums (engine.spark.verification): the arithmetic by hand in pure
Python, then the same numbers from Spark on a tiny table.

A row ``r`` of group ``g`` contributes ``h = xxhash64(r)`` and the tagged ``t =
xxhash64(h, g)``; a moved row keeps the count and ``sum h`` but changes ``sum t``.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from engine.spark.hashing import xxhash64_int, xxhash64_long
from engine.spark.verification import Sums, mismatch

#: the tiny table: (v, group)
ROWS = [(1, 0), (2, 0), (3, 1)]
SPECS = [SimpleNamespace(index=0, rows=2), SimpleNamespace(index=1, rows=1)]


def _sums(rows) -> dict[int, Sums]:
    """Per group: the sums as the definition says, with Python's exact integers."""
    out: dict[int, Sums] = {}
    for v, g in rows:
        h = xxhash64_long(v)
        # Spark's xxhash64(h, g): h hashed with seed 42, then g with that hash as the seed
        t = xxhash64_int(g, seed=xxhash64_long(h))
        out[g] = out.get(g, Sums()) + Sums(1, h, t)
    return out


def test_the_halves_recombine_exactly():
    # -1 is hi -1, lo 2**32 - 1; 2**32 + 5 is hi 1, lo 5: sums hi 0, lo 2**32 + 4
    assert Sums.of({"n": 2, "h_hi": 0, "h_lo": 2**32 + 4}) == Sums(2, 2**32 + 4, 0)
    # 3 * (2**63 - 1): a sum no bigint holds, exact once recombined
    big = 2**63 - 1
    hi, lo = big >> 32, big & 0xFFFFFFFF
    assert Sums.of({"n": 3, "t_hi": 3 * hi, "t_lo": 3 * lo}).t == 3 * big


def test_a_moved_row_keeps_rows_and_checksum_but_not_the_tagged_sum():
    right = _sums(ROWS)
    seen = sum(right.values(), Sums())
    assert mismatch(SPECS, seen, right, tag=True) is None
    # row 2 written into group 1 and row 3 into group 0: counts and sum h unchanged
    swapped = _sums([(1, 0), (3, 0), (2, 1)])
    total = sum(swapped.values(), Sums())
    assert (total.n, total.h) == (seen.n, seen.h)
    assert [swapped[g].n for g in (0, 1)] == [2, 1]
    assert total.t != seen.t
    assert mismatch(SPECS, seen, swapped, tag=True).startswith("the tagged checksum differs")
    # without the tag (a one-group job) nothing could tell: why plans of 2+ groups tag
    assert mismatch(SPECS, seen, swapped, tag=False) is None


def test_lost_duplicated_and_altered_rows_are_refused():
    seen = sum(_sums(ROWS).values(), Sums())
    lost = _sums([(1, 0), (3, 1)])
    assert mismatch(SPECS, seen, lost, tag=True) == "group 0: the snapshot says 2 input rows, 1 written"
    altered = _sums([(1, 0), (4, 0), (3, 1)])
    assert "checksum" in mismatch(SPECS, seen, altered, tag=True)
    dup_for_lost = _sums([(1, 0), (1, 0), (3, 1)])  # row 2 lost, row 1 twice
    assert "checksum" in mismatch(SPECS, seen, dup_for_lost, tag=True)
    assert "snapshot says 3" in mismatch(SPECS, Sums(2, seen.h, seen.t), _sums(ROWS), True)


@pytest.mark.spark
def test_spark_sums_equal_the_hand_computed_ones(spark):
    from engine.spark.jobspec import GROUP_COLUMN
    from engine.spark.verification import HASH_COLUMN, hash_sums, with_hashes

    df = spark.createDataFrame([(v, g) for v, g in ROWS], f"v bigint, {GROUP_COLUMN} int")
    hashed = with_hashes(df, ["v"], tag=True)  # what the write and the read-back compute
    assert hashed.select(HASH_COLUMN).collect()[0][0] == xxhash64_long(1)
    got = {int(r[GROUP_COLUMN]): Sums.of(r.asDict())
           for r in hashed.groupBy(GROUP_COLUMN).agg(*hash_sums(True)).collect()}
    assert got == _sums(ROWS)
    whole = Sums.of(hashed.agg(*hash_sums(True)).collect()[0].asDict())
    assert whole == sum(_sums(ROWS).values(), Sums())
