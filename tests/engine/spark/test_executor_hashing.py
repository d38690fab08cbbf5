"""The driver's copies of Spark's hashes and the path table (no Spark: values Spark 4.0
returned for the same inputs, checked once against a live session)."""

from __future__ import annotations

from engine.spark.checksum import format_checksum
from engine.spark.hashing import PathLookup, hash_targets, spark_hash_long, xxhash64


def test_xxhash64_matches_spark_on_both_spellings_and_long_strings():
    # Spark: SELECT xxhash64('file:/tmp/p%20q%23mmoqf0z4/a%20b%25c.parquet') etc.
    assert xxhash64("file:/tmp/p%20q%23mmoqf0z4/a%20b%25c.parquet") == -1517487708376928627
    assert xxhash64("file:///tmp/p%20q%23mmoqf0z4/a%20b%25c.parquet") == 771355741023607756
    # every tail length (stripes of 32, words of 8 and 4, single bytes) is a distinct value
    values = {xxhash64("x" * n) for n in range(0, 70)}
    assert len(values) == 70


def test_path_lookup_finds_every_path_of_a_big_plan_and_nothing_else():
    paths = {f"file:/data/t/part-{i:05d}.parquet": i for i in range(5000)}
    table = PathLookup(paths)
    assert table.slots == 16384 and 1 <= len(table.layers) <= 8
    assert all(table.find(xxhash64(p)) == i for p, i in paths.items())
    assert table.find(xxhash64("file:/data/t/other.parquet")) == -1


def test_hash_targets_route_to_every_partition():
    for n in (1, 2, 7, 64):
        assert sorted(spark_hash_long(v) % n for v in hash_targets(n)) == list(range(n))


def test_checksum_halves_recombine_exactly():
    hashes = [-(1 << 63), (1 << 63) - 1, -1, 0, 12345]
    hi = sum(h >> 32 for h in hashes)
    lo = sum(h & 0xFFFFFFFF for h in hashes)
    assert format_checksum({"n": len(hashes), "h_hi": hi, "h_lo": lo}) == (5, str(sum(hashes)))
