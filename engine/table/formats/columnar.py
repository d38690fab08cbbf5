"""A format's file statistics as the engine's columnar manifest: zonemaps without objects.

The native snapshot is a typed Arrow manifest (one row per
data file, ``c{i}_min/max/nulls/cbytes`` per column, :mod:`engine.table.manifest`) from
which :class:`~engine.table.model.ZoneMaps` (numpy arrays: what metrics, pruning, the
policies and the sparse scan read) are built straight from Arrow arrays, and ``Partition``
objects only on access. This module builds that same manifest from an open format's
metadata, so an Iceberg or Delta snapshot gets the same columnar path:

* Delta: ``get_add_actions(flatten=True)`` is already Arrow; every column is cast, not
  converted value by value (:func:`column_arrays` for the partition columns too);
* Iceberg: manifest entries come out of pyiceberg's Avro reader as Python objects, but the
  bounds are decoded per column in bulk (:func:`decode_bounds`: fixed-width types through
  one ``numpy.frombuffer``, strings through one Arrow cast), not per file and column.

Columns whose statistics the format lacks are filled from the Parquet footers for tables
up to a size (the formats' ``FOOTER_FALLBACK_MAX_FILES``), column by column.
"""

from __future__ import annotations

import decimal
import math
import struct
from typing import Any, Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.core.errors import DataFileError
from engine.table import footers, manifest
from engine.table.model import Snapshot, TableSchema

#: Iceberg single-value serialization widths (little-endian) of the fixed-width types
_WIDTH = {"int32": 4, "int64": 8, "float32": 4, "float64": 8, "bool": 1}


def empty_column(ltype: str, n: int) -> pa.Array:
    return pa.nulls(n, manifest.arrow_type(ltype))


def as_manifest_type(ltype: str, array: Any) -> pa.Array:
    """``array`` cast to the manifest's Arrow type of ``ltype`` (zoned timestamps become
    naive UTC, decimals strings; unsupported types unknown)."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks() if array.num_chunks else pa.array([], array.type)
    target = manifest.arrow_type(ltype)
    if ltype == "other":
        return pa.nulls(len(array), target)
    if pa.types.is_timestamp(array.type) and array.type.tz is not None:
        array = pc.cast(array, pa.int64()).cast(pa.timestamp(array.type.unit))
    if ltype == "decimal" and not pa.types.is_string(array.type):
        return pa.array([None if v is None else str(v) for v in array.to_pylist()], pa.string())
    return pc.cast(array, target)


def build(schema: TableSchema, paths: Sequence[str] | pa.Array, rows: Any, sizes: Any,
          columns: Mapping[str, tuple[Any, Any, Any, Any]], seqs: Any = None) -> pa.Table:
    """The manifest table: ``columns[name] = (min, max, null count, compressed bytes)``
    Arrow arrays (or None: unknown) per schema column, rows in snapshot order;
    ``seqs`` the files' creation order (default 0, 1, 2 ...)."""
    n = len(paths)
    data: dict[str, Any] = {
        "path": pa.array(paths, pa.string()) if not isinstance(paths, pa.Array) else paths,
        "rows": pa.array(np.asarray(rows, dtype=np.int64)),
        "bytes": pa.array(np.asarray(sizes, dtype=np.int64)),
        "created_seq": pa.array(np.asarray(np.arange(n) if seqs is None else seqs, dtype=np.int64)),
        "rg_file": pa.nulls(n, pa.string()),
    }
    for i, (name, ltype) in enumerate(schema.columns):
        lo, hi, nulls, cbytes = columns.get(name, (None, None, None, None))
        data[f"c{i}_min"] = as_manifest_type(ltype, lo) if lo is not None else empty_column(ltype, n)
        data[f"c{i}_max"] = as_manifest_type(ltype, hi) if hi is not None else empty_column(ltype, n)
        data[f"c{i}_nulls"] = (pc.cast(nulls, pa.int64()) if nulls is not None
                               else pa.nulls(n, pa.int64()))
        data[f"c{i}_cbytes"] = (pc.cast(cbytes, pa.int64()) if cbytes is not None
                                else pa.array(np.zeros(n, dtype=np.int64)))
    return pa.Table.from_pydict(data, schema=manifest.manifest_schema(schema))


def fill_from_footers(table: pa.Table, schema: TableSchema, missing: Sequence[str],
                      max_files: int) -> tuple[pa.Table, list[str]]:
    """The ``missing`` columns' bounds (and null counts and sizes where the format had
    none) read from the files' Parquet footers, for tables of at most ``max_files``
    files; returns the table and the columns filled (none when skipped or unreadable)."""
    if not missing or table.num_rows == 0 or table.num_rows > max_files:
        return table, []
    try:
        _, read = footers.read_partitions(table.column("path").to_pylist(), schema)
    except DataFileError:  # a file the metadata names cannot be read: bounds stay unknown
        return table, []
    index = {name: i for i, (name, _) in enumerate(schema.columns)}
    for name in missing:
        i, ltype = index[name], schema.columns[index[name]][1]
        stats = [p.columns.get(name) for p in read]
        lo = [None if s is None else manifest.stat_value(ltype, s.min) for s in stats]
        hi = [None if s is None else manifest.stat_value(ltype, s.max) for s in stats]
        target = manifest.arrow_type(ltype)
        table = _set(table, f"c{i}_min", pa.array(lo, target))
        table = _set(table, f"c{i}_max", pa.array(hi, target))
        nulls = table.column(f"c{i}_nulls")
        if nulls.null_count == len(nulls):
            table = _set(table, f"c{i}_nulls", pa.array(
                [None if s is None else s.null_count for s in stats], pa.int64()))
        sizes = table.column(f"c{i}_cbytes")
        if pc.sum(sizes).as_py() in (0, None):
            table = _set(table, f"c{i}_cbytes", pa.array(
                [0 if s is None else int(s.compressed_bytes or 0) for s in stats], pa.int64()))
    return table, list(missing)


def _set(table: pa.Table, name: str, array: pa.Array) -> pa.Table:
    return table.set_column(table.schema.get_field_index(name), name, array)


def snapshot(data: pa.Table, schema: TableSchema, **fields: Any) -> Snapshot:
    """A :class:`Snapshot` over the manifest table ``data``: partitions made on access,
    zonemaps straight from the Arrow arrays (as the native store's snapshots)."""
    snap = Snapshot(schema=schema, partitions=manifest.table_to_partitions(schema, data),
                    **fields)
    object.__setattr__(snap, "_zonemaps", manifest.table_to_zonemaps(schema, data))
    return snap


# -- Iceberg bounds in bulk --------------------------------------------------------------
def decode_bounds(kind: str, raws: Sequence[bytes | None], scale: int = 0) -> pa.Array:
    """Iceberg single-value serialized bounds of one column, decoded in bulk into the
    manifest's Arrow type. ``kind``: ``int32``, ``int64`` (longs; also a promoted int's
    4-byte bounds), ``float32``, ``float64``, ``bool``, ``date`` (int32 days),
    ``timestamp`` (int64 microseconds, with or without zone: UTC), ``string``,
    ``decimal`` (big-endian unscaled, ``scale``) or ``other``.

    >>> decode_bounds("date", [(18262).to_bytes(4, "little"), None]).to_pylist()
    [datetime.date(2020, 1, 1), None]
    >>> decode_bounds("int64", [(5).to_bytes(8, "little"), (-2).to_bytes(4, "little", signed=True)]).to_pylist()
    [5, -2]
    >>> decode_bounds("decimal", [(150).to_bytes(2, "big")], scale=2).to_pylist()
    ['1.50']
    >>> decode_bounds("string", [b"ab", None]).to_pylist()
    ['ab', None]
    """
    n = len(raws)
    valid = np.fromiter((r is not None for r in raws), dtype=bool, count=n)
    mask = ~valid
    if kind == "string":
        return pc.cast(pa.array(list(raws), pa.binary()), pa.string())
    if kind == "decimal":
        return pa.array([None if r is None else str(decimal.Decimal(
            int.from_bytes(r, "big", signed=True)).scaleb(-scale)) for r in raws], pa.string())
    if kind == "other":
        return pa.nulls(n, pa.string())
    base = {"date": "int32", "timestamp": "int64"}.get(kind, kind)
    values = _fixed(base, raws, valid)
    if kind == "date":
        return pa.array(values.astype(np.int32), pa.int32(), mask=mask).cast(pa.date32())
    if kind == "timestamp":
        return pa.array(values.astype(np.int64), pa.int64(), mask=mask).cast(pa.timestamp("us"))
    if kind == "bool":
        return pa.array(values.astype(bool), pa.bool_(), mask=mask)
    if kind.startswith("float"):
        return pa.array(values.astype(np.float64), pa.float64(), mask=mask)
    return pa.array(values.astype(np.int64), pa.int64(), mask=mask)


def nan_safe_bounds(lo: pa.Array, hi: pa.Array, nan_counts: Sequence[int | None],
                    ) -> tuple[pa.Array, pa.Array]:
    """Float bounds (float64 arrays) made safe for pruning, as the footer reader does
    (the footer reader's NaN rule): DuckDB and Spark sort
    NaN above every number, so a file holding NaN can match ``x > 100`` whatever its other
    values. The Iceberg spec keeps NaN out of the bounds and counts it in
    ``nan_value_counts``: a file with NaN counted gets +inf as upper bound. A writer that
    puts NaN into the bounds anyway: a NaN upper bound becomes +inf, a NaN lower bound
    makes both bounds unknown. Without a NaN count (pyiceberg writes none, as pyarrow's
    footers keep NaN out of min/max) the bounds stay as written: that is what Iceberg's
    metrics evaluator and DuckDB's own Parquet pruning read too.

    >>> lo, hi = nan_safe_bounds(pa.array([1.0, float("nan"), -0.0, 2.0]),
    ...                          pa.array([float("nan"), 3.0, 0.0, 5.0]), [None, 0, 0, 4])
    >>> lo.to_pylist(), hi.to_pylist()
    ([1.0, None, -0.0, 2.0], [inf, None, 0.0, inf])
    """
    lo_nan = pc.fill_null(pc.is_nan(lo), False)
    nans = pa.array([int(c or 0) > 0 for c in nan_counts], pa.bool_())
    hi_inf = pc.or_(pc.fill_null(pc.is_nan(hi), False), nans)
    unknown = pa.nulls(len(lo), pa.float64())
    hi = pc.if_else(hi_inf, pa.scalar(math.inf, pa.float64()), hi)
    return pc.if_else(lo_nan, unknown, lo), pc.if_else(lo_nan, unknown, hi)


def _fixed(kind: str, raws: Sequence[bytes | None], valid: np.ndarray) -> np.ndarray:
    """Little-endian fixed-width values (zero where missing) in one ``frombuffer``; a
    column whose bounds have mixed widths (an int promoted to long) value by value."""
    width = _WIDTH[kind]
    dtype = {"int32": "<i4", "int64": "<i8", "float32": "<f4", "float64": "<f8", "bool": "u1"}[kind]
    zero = b"\0" * width
    if all(r is None or len(r) == width for r in raws):
        return np.frombuffer(b"".join(zero if r is None else r for r in raws), dtype=dtype)
    if kind.startswith("float"):  # a float promoted to double: 4- and 8-byte bounds
        return np.array([0.0 if r is None else struct.unpack("<f" if len(r) == 4 else "<d", r)[0]
                         for r in raws], dtype=np.float64)
    return np.array([0 if r is None else int.from_bytes(r, "little", signed=True)
                     for r in raws], dtype=np.int64)
