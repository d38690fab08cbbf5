"""Zonemaps straight from the manifest, partitions made on access."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa
from hypothesis import given
from hypothesis import settings as settings_hyp
from hypothesis import strategies as st

from manifest_helpers import mixed_manifest
from engine.core import logical_types
from engine.table.formats.native_files import clear_snapshot_cache
from engine.table.manifest import (ManifestPartitions, utf8_array, table_to_partitions,
                                   table_to_zonemaps, unicode_array)
from engine.table.model import ColumnStats, Partition, ZoneMaps
from engine.table.store import TableStore
from tests.helpers.scale_scenario import SCHEMA


def test_loaded_snapshot_has_lazy_partitions_and_identical_zonemaps(settings, tmp_path) -> None:
    rng = np.random.default_rng(3)
    parts = []
    for i in range(300):
        a = int(rng.integers(0, 1000))
        parts.append(Partition(f"{tmp_path}/p{i:04d}.parquet", 100 + i, 5000 + i, {
            "a": ColumnStats(a, a + 5, 0, 10),
            "b": ColumnStats(None, None, None, 0) if i % 7 == 0 else ColumnStats(0.5 * i, 0.5 * i + 1, 2, 20),
            "d": ColumnStats(dt.date(2024, 1, 1), dt.date(2024, 2, 1) + dt.timedelta(days=i), 0, 5),
            "s": ColumnStats(f"k{i:04d}", f"k{i + 9:04d}", 1, 30),
            "c": ColumnStats(float(i), float(i) + 2.0, 0, 40),
        }, i))
    TableStore(settings).create("t", schema=SCHEMA, partitions=parts, operation="register",
                                managed=False, location=str(tmp_path))
    clear_snapshot_cache()
    snap = TableStore(settings).current_snapshot("t")
    assert isinstance(snap.partitions, ManifestPartitions)
    assert len(snap.partitions) == snap.partition_count == 300
    assert snap.partitions[-1].path == parts[-1].path and snap.partitions[5].rows == 105
    assert [p.path for p in snap.partitions[10:13]] == [p.path for p in parts[10:13]]
    assert snap.partitions[7].columns["b"].min is None
    assert snap.partitions == tuple(parts)
    assert snap.total_rows == sum(p.rows for p in parts)
    zm, ref = snap.zonemaps(), ZoneMaps.from_partitions(SCHEMA, parts)
    assert zm.paths.tolist() == ref.paths.tolist() and zm.paths.dtype == object
    assert np.array_equal(zm.rows, ref.rows) and np.array_equal(zm.created_seq, ref.created_seq)
    for name in SCHEMA.names:
        a, b = zm.column(name), ref.column(name)
        assert np.array_equal(a.valid, b.valid), name
        assert a.lo[a.valid].tolist() == b.lo[b.valid].tolist(), name
        assert a.hi[a.valid].tolist() == b.hi[b.valid].tolist(), name
        assert np.array_equal(a.null_count, b.null_count), name
        assert np.array_equal(a.compressed_bytes, b.compressed_bytes), name


@settings_hyp(max_examples=150, deadline=None)
@given(chunks=st.lists(st.lists(st.one_of(st.none(), st.text(max_size=12),
                                          st.text(alphabet="ab\x00~ ", max_size=6)), max_size=20),
                       min_size=1, max_size=4),
       start=st.integers(0, 3))
def test_unicode_array_equals_the_object_path(chunks, start) -> None:
    """Strings straight from Arrow's buffers read exactly what the Python-object path
    reads: nulls as "", NUL bytes, non-ASCII (object path), sliced and chunked arrays."""
    _assert_like_the_object_path(chunks, start)


def _assert_like_the_object_path(chunks, start) -> tuple[pa.ChunkedArray, np.ndarray, np.ndarray]:
    """``unicode_array`` of the chunks (sliced at ``start``) reads the values, validity and
    order the Python-object path reads; returns (array, got, want) for further checks."""
    array = pa.chunked_array([pa.array(c, pa.string()) for c in chunks], pa.string())
    array = array.slice(min(start, len(array)))
    got, got_valid = unicode_array(array)
    want, want_valid = logical_types.encode_arrow("string", array)
    assert got.dtype.kind == "U" and got.tolist() == want.tolist()
    assert np.array_equal(got_valid, want_valid)
    return array, got, want


def test_mixed_manifest_zonemaps_keep_every_type() -> None:
    """The bench's mixed manifest (every type) gives the zonemaps of its Partition objects."""
    schema, table, _ = mixed_manifest(300, seed=5)
    zm = table_to_zonemaps(schema, table)
    ref = ZoneMaps.from_partitions(schema, list(table_to_partitions(schema, table)))
    for name in schema.names:
        a, b = zm.column(name), ref.column(name)
        assert np.array_equal(a.valid, b.valid), name
        assert a.lo.tolist() == b.lo.tolist() and a.hi.tolist() == b.hi.tolist(), name
        assert a.lo.dtype.kind == b.lo.dtype.kind, name


#: accents, CJK, emoji (4-byte UTF-8), NUL, ASCII: every UTF-8 length
_NON_ASCII = st.text(alphabet=st.sampled_from(list("aZ~ \x00éÆøß東京語🦆😀\U0010fffd\u0800\u07ff")),
                     max_size=8)


@settings_hyp(max_examples=200, deadline=None)
@given(chunks=st.lists(st.lists(st.one_of(st.none(), _NON_ASCII, st.text(max_size=6)),
                                max_size=25), min_size=1, max_size=3),
       start=st.integers(0, 4))
def test_non_ascii_bounds_decode_in_numpy_like_the_object_path(chunks, start) -> None:
    """Non-ASCII string bounds go from Arrow to numpy without a Python str per
    value (manifest.utf8_array); values, width and order equal the object path's."""
    array, got, want = _assert_like_the_object_path(chunks, start)
    assert np.array_equal(np.argsort(got, kind="stable"), np.argsort(want, kind="stable"))
    combined = array.combine_chunks() if array.num_chunks else pa.array([], pa.string())
    if len(combined):
        direct, _ = utf8_array(combined)  # the numpy decoder itself, ASCII or not
        assert direct.tolist() == want.tolist()


def test_encode_arrow_takes_int64_beyond_the_exact_doubles() -> None:
    # 2**53 + 1 has no double: it rounds (monotonically) instead of raising ArrowInvalid
    from engine.core.logical_types import encode_arrow

    big = [-(2**63), -(2**53) - 1, 0, 2**53 + 1, 2**63 - 1, None]
    out, valid = encode_arrow("int", pa.array(big, pa.int64()))
    assert valid.tolist() == [True, True, True, True, True, False]
    assert out[:5].tolist() == [-2.0**63, -(2.0**53), 0.0, 2.0**53, 2.0**63]
    assert np.all(np.diff(out[:5]) >= 0)  # the order is kept
