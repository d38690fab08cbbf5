"""Iceberg bounds of float, double, bool, binary and fixed columns, decoded from manifests
pyiceberg wrote into a real SQLite-catalog table (int, date, timestamps, decimal and
string: tests/engine/table/formats/test_formats_iceberg.py).

What the spec and pyiceberg leave to the reader, checked here by hand:
* NaN is kept out of the bounds (pyarrow's footers keep it out of min/max) and counted in
  ``nan_value_counts`` by writers that count it (Java's; pyiceberg writes none): a counted
  NaN makes the upper bound +inf, a NaN written into a bound anyway is made safe the way
  the footer reader does;
* -0.0 and +0.0: pyarrow writes min -0.0 and max +0.0 for a file of zeros (the Parquet
  rule); both decode with their sign and prune as equal numbers;
* strings and binary are truncated to 16 characters/bytes; an upper bound that cannot be
  incremented (all U+10FFFF, all 0xFF) is left out, so the file's bounds are unknown;
  binary and fixed columns are not orderable here: no bounds, null counts kept.
"""

from __future__ import annotations

import math
import shutil
import struct

import numpy as np
import pyarrow as pa
from pyiceberg.io.pyarrow import parquet_file_to_data_file
from pyiceberg.manifest import DataFile

from engine import api
from engine.scan.pruning import analyze_fragment
from engine.workload.model import Range, ScanFragment
from format_helpers import IDENT, iceberg_table, live_data_files, local

NAN = float("nan")
TOP = "\U0010ffff" * 20  # no 16-character prefix can be incremented
SCHEMA = pa.schema([pa.field("f", pa.float32()), pa.field("g", pa.float64()),
                    pa.field("b", pa.bool_()), pa.field("bin", pa.binary()),
                    pa.field("fx", pa.binary(2)), pa.field("s", pa.string())])
FILES = [  # one append each: one data file each
    {"f": [1.5, NAN, -0.0, None], "g": [0.25, NAN, -3.5, 2.0], "b": [True, None, True, True],
     "bin": [b"\x00\xff", b"a" * 40, b"\xff" * 20, None], "fx": [b"ab", b"zz", b"\x00\x01", None],
     "s": ["a" * 30, "b", TOP, None]},
    {"f": [0.0, -0.0, 0.0, None], "g": [-0.0, -0.0, -0.0, -0.0], "b": [False, False, None, False],
     "bin": [b"c", None, None, b"e"], "fx": [None, None, None, None],
     "s": ["x" * 20, "y", "z" * 17, "w"]},
    {"f": [NAN, None, NAN, NAN], "g": [1e300, -1e300, math.inf, -math.inf],
     "b": [True, False, True, False], "bin": [b"", b"q", b"r", b"s"], "fx": [b"aa", b"bb", None, b"cc"],
     "s": ["", "m", None, "n"]},
]
# (min, max) each file's bounds decode to, by hand (None: unknown)
EXPECTED = {
    "f": [(-0.0, 1.5), (-0.0, 0.0), (None, None)],  # all-NaN: pyarrow writes no min/max
    "g": [(-3.5, 2.0), (-0.0, 0.0), (-math.inf, math.inf)],
    "b": [(True, True), (False, False), (False, True)],
    "s": [("a" * 16, None), ("w", "z" * 15 + "{"), ("", "n")],
}


def _data() -> pa.Table:
    return pa.concat_tables([pa.table(f, schema=SCHEMA) for f in FILES])


def _scan(snap, column: str, rng: Range) -> set[int]:
    """The files a query with ``rng`` on ``column`` reads after pruning."""
    frag = ScanFragment("q", snap.table, ({column: rng},), (column,))
    return set(analyze_fragment(snap.zonemaps(), frag).index.tolist())


def _matches(value, rng: Range) -> bool:
    """Iceberg's row semantics: a NaN or null matches no comparison."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return False
    lo_ok = rng.min is None or (value >= rng.min if rng.min_inclusive else value > rng.min)
    hi_ok = rng.max is None or (value <= rng.max if rng.max_inclusive else value < rng.max)
    return lo_ok and hi_ok


RANGES = {
    "f": [Range(0.0, 0.0), Range(None, -0.0, True, False), Range(1.0, None), Range(2.0, None),
          Range(-0.0, -0.0)],
    "g": [Range(0.0, 0.0), Range(1e301, None), Range(None, -1e301), Range(3.0, 4.0),
          Range(-0.0, None, False, True)],
    "b": [Range(True, True), Range(False, False)],
    "s": [Range("zzzzzzzzzzzzzzzzzz", None), Range(None, "a"), Range("b", "b"), Range(TOP, None)],
}


def test_float_bool_binary_and_string_bounds_as_pyiceberg_wrote_them(settings):
    data = _data()
    iceberg_table(settings, data, 4)
    snap = api.register_iceberg(settings, "typed", IDENT)
    assert dict(snap.schema.columns) == {"f": "float", "g": "float", "b": "bool", "bin": "other",
                                         "fx": "other", "s": "string"}
    assert snap.partition_count == 3 and snap.summary["columns_without_stats"] == []
    assert snap.schema.orderable() == ["f", "g", "s"]  # what policies cluster on: no bool, binary
    for col, spans in EXPECTED.items():
        got = [(p.columns[col].min, p.columns[col].max) for p in snap.partitions]
        assert got == spans, col
    # the sign of zero survives decoding: min -0.0, max +0.0 (the Parquet rule)
    zeros = snap.partitions[1].columns["g"]
    assert math.copysign(1, zeros.min) == -1 and math.copysign(1, zeros.max) == 1
    for i, part in enumerate(snap.partitions):
        for col in ("bin", "fx"):  # not orderable: no bounds, but the null counts
            assert (part.columns[col].min, part.columns[col].max) == (None, None)
            assert part.columns[col].null_count == sum(v is None for v in FILES[i][col])
        assert part.columns["f"].null_count == 1 and part.columns["g"].null_count == 0
    zm = snap.zonemaps().columns
    assert zm["s"].valid.tolist() == [False, True, True]  # no upper bound: unknown
    assert zm["f"].valid.tolist() == [True, True, False]
    assert zm["bin"].valid.tolist() == [False] * 3
    # pruning never drops a file holding a matching row
    for col, ranges in RANGES.items():
        for rng in ranges:
            scanned = _scan(snap, col, rng)
            holding = {i for i, f in enumerate(FILES) if any(_matches(v, rng) for v in f[col])}
            assert holding <= scanned, (col, rng, holding, scanned)
    assert _scan(snap, "g", Range(3.0, 4.0)) == {2}  # still prunes: only [-inf, inf] may hold 3..4
    assert _scan(snap, "b", Range(False, False)) == {1, 2}


def _entry(df: DataFile, path: str, **changes) -> DataFile:
    """``df`` for another file with some metrics replaced (what another writer records)."""
    names = ("content", "file_format", "partition", "record_count", "file_size_in_bytes",
             "column_sizes", "value_counts", "null_value_counts", "nan_value_counts",
             "lower_bounds", "upper_bounds", "key_metadata", "split_offsets", "equality_ids",
             "sort_order_id")
    return DataFile.from_args(**{**{n: getattr(df, n) for n in names}, "file_path": path,
                                 **changes}, spec_id=0)  # unpartitioned


def test_nan_counted_or_written_into_the_bounds_never_prunes_a_nan_file(settings, tmp_path):
    """A Java writer counts NaN (``nan_value_counts``); a careless one writes NaN bounds.
    Both entries are committed to the real table next to pyiceberg's own."""
    data = pa.table({"f": pa.array([1.0, 2.0, 3.0], pa.float32()),
                     "g": pa.array([4.0, 5.0, 6.0])})
    catalog, tbl = iceberg_table(settings, data, 3)
    (ref,) = live_data_files(tbl).values()
    nan_f, nan_g = struct.pack("<f", NAN), struct.pack("<d", NAN)
    entries = []
    for k, changes in enumerate([
            {"nan_value_counts": {1: 2, 2: 0}},  # NaN counted: upper bound +inf
            {"upper_bounds": {1: nan_f, 2: nan_g}},  # NaN maxima: +inf
            {"lower_bounds": {1: nan_f, 2: ref.lower_bounds[2]}}]):  # NaN minimum: unknown
        copy = str(tmp_path / f"copy{k}.parquet")
        shutil.copy(local(ref.file_path), copy)
        made = parquet_file_to_data_file(tbl.io, tbl.metadata, f"file://{copy}")
        entries.append(_entry(made, f"file://{copy}", **changes))
    with tbl.transaction() as tx, tx.update_snapshot().fast_append() as append:
        for entry in entries:
            append.append_data_file(entry)
    snap = api.register_iceberg(settings, "nan", IDENT)
    spans = {col: [(p.columns[col].min, p.columns[col].max) for p in snap.partitions]
             for col in ("f", "g")}
    assert spans["f"] == [(1.0, 3.0), (1.0, math.inf), (1.0, math.inf), (None, None)]
    assert spans["g"] == [(4.0, 6.0), (4.0, 6.0), (4.0, math.inf), (4.0, 6.0)]
    # NaN sorts above every number (DuckDB, Spark): a range above the values reads the
    # NaN files, and only them
    assert _scan(snap, "f", Range(100.0, None)) == {1, 2, 3}
    assert _scan(snap, "g", Range(100.0, None)) == {2}
    assert _scan(snap, "f", Range(None, 0.5)) == {3}
    assert not np.isnan(snap.zonemaps().columns["f"].hi[:3]).any()
