"""Zonemaps from Parquet footers: rows, bytes, per-column min/max/null count and sizes.

Only footers are read, never data pages, so this is cheap: a few hundred files per second
per core, read here with pyarrow on a few threads. No Spark: for very many files
:mod:`engine.spark.footers_parallel` passes a ``raw_reader`` that maps :func:`footer_reader`
over the Spark executors (the reader knows nothing but the path, so that works on a
cluster).

Row-group statistics are kept too. ``Partition`` has no field for them, so they travel
beside it: :func:`read_footers` returns them, and :func:`read_partitions` remembers them in a
small process cache that the native commit (:func:`engine.table.formats.native_files.publish`)
consults when it writes the row-group manifest next to a snapshot.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import pyarrow
import pyarrow.parquet as pq
import pyarrow.types as pat

from engine.core import logical_types
from engine.core.errors import DataFileError
from engine.table import fs
from engine.table.model import ColumnStats, Partition, TableSchema

#: raw footers of many paths, in order: ("ok", path, size, rows, groups) or ("error", path, msg)
RawReader = Callable[[Sequence[str]], list[tuple]]

_THREADS = 8
_CACHE_LIMIT = 500_000  # files whose row-group stats are remembered for the next commit

# (path, bytes) -> row groups; see module docstring
_ROW_GROUP_CACHE: "OrderedDict[tuple[str, int], list[dict]]" = OrderedDict()


@dataclass(frozen=True)
class RowGroupStats:
    """Statistics of one row group: ``columns[name] = (min, max, null_count)``; ``offset``:
    where the row group starts in the file (its first column chunk's dictionary page, else
    its first data page: Iceberg's ``split_offsets``, parquet-mr's rule), None if unknown;
    ``column_bytes[name]``: the compressed bytes of the column's chunk in this row group
    (what a reader of that column reads of the row group; row-group pruning charges them,
    ``engine.scan.rowgroups``), None if unknown."""

    index: int
    rows: int
    columns: dict[str, tuple[Any, Any, int | None]]
    offset: int | None = None
    column_bytes: dict[str, int] | None = None


@dataclass(frozen=True)
class FooterResult:
    schema: TableSchema
    partitions: list[Partition]
    row_groups: dict[str, list[RowGroupStats]]  # by partition path


def table_schema_from_arrow(schema: "pyarrow.Schema") -> TableSchema:
    """Logical types of an Arrow schema; unsupported types (lists, binary...) become 'other'."""
    cols = []
    for field in schema:
        arrow_type = field.type
        if pat.is_dictionary(arrow_type):
            arrow_type = arrow_type.value_type
        cols.append((field.name, logical_types.logical_type_of_arrow(arrow_type) or "other"))
    return TableSchema(tuple(cols))


def footer_reader() -> Callable[[str], tuple]:
    """Build the function that turns one path into raw footer data.

    It is a closure on purpose: cloudpickle ships it to Spark executors by value, and it
    uses nothing but its argument and pyarrow, so executors need no state from the driver
    (hence its own imports). Errors come back as values (``("error", path, message)``) so
    the driver can name the file.
    """

    def read(path: str) -> tuple:
        import datetime as _dt  # imports inside: shipped by value to executors
        import re as _re

        import pyarrow.fs as _pafs
        import pyarrow.parquet as _pq

        try:
            if _re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", path) and not path.lower().startswith("file://"):
                filesystem, inner = _pafs.FileSystem.from_uri(_re.sub(r"^s3[an]://", "s3://", path))
            else:
                filesystem, inner = _pafs.LocalFileSystem(), (path[7:] if path.lower().startswith("file://") else path)
            info = filesystem.get_file_info(inner)
            if info.type == _pafs.FileType.NotFound:
                return ("error", path, "no such file")
            size = int(info.size or 0)
            if size == 0:
                return ("error", path, "empty file (0 bytes), not Parquet")
            with filesystem.open_input_file(inner) as handle:
                pf = _pq.ParquetFile(handle)
                meta, arrow = pf.metadata, pf.schema_arrow

            def leaves(t) -> int:  # leaf columns under one Arrow type, in schema order
                t = getattr(t, "storage_type", t)
                return sum(leaves(t.field(i).type) for i in range(t.num_fields)) if t.num_fields else 1

            # leaf column j -> (its top-level field, nested?): by position, since a
            # path_in_schema "a.b" is a struct's leaf or a column named "a.b"
            owner = [(f.name, getattr(f.type, "storage_type", f.type).num_fields > 0)
                     for f in arrow for _ in range(leaves(f.type))]
            if len(owner) != meta.num_columns:  # not expected: fall back on the paths
                owner = [(meta.schema.column(j).path.split(".")[0],
                          "." in meta.schema.column(j).path) for j in range(meta.num_columns)]
            groups = []
            for r in range(meta.num_row_groups):
                rg = meta.row_group(r)
                cols: dict[str, list] = {}
                for j in range(rg.num_columns):
                    chunk = rg.column(j)
                    top, nested = owner[j]
                    entry = cols.setdefault(top, [False, None, None, 0, 0])
                    entry[4] += int(chunk.total_compressed_size or 0)
                    if nested:
                        entry[3] = None  # nested: no usable stats
                        continue
                    st = chunk.statistics
                    if st is None:
                        entry[3] = None
                        continue
                    nulls = int(st.null_count) if st.has_null_count else None
                    entry[3] = nulls
                    if st.has_min_max:
                        lo, hi = st.min, st.max
                        if isinstance(lo, _dt.datetime) and lo.tzinfo is not None:
                            lo = lo.astimezone(_dt.timezone.utc).replace(tzinfo=None)
                        if isinstance(hi, _dt.datetime) and hi.tzinfo is not None:
                            hi = hi.astimezone(_dt.timezone.utc).replace(tzinfo=None)
                        if isinstance(lo, bytes):
                            lo = lo.decode("utf-8", "replace")
                        if isinstance(hi, bytes):
                            hi = hi.decode("utf-8", "replace")
                        entry[0], entry[1], entry[2] = True, lo, hi
                first = rg.column(0) if rg.num_columns else None
                offset = None
                if first is not None:
                    offset = int(first.data_page_offset)
                    if first.has_dictionary_page and 0 <= first.dictionary_page_offset < offset:
                        offset = int(first.dictionary_page_offset)
                groups.append((rg.num_rows, {k: tuple(v) for k, v in cols.items()}, offset))
            return ("ok", path, size, meta.num_rows, groups)
        except Exception as exc:  # noqa: BLE001 - reported to the driver with the path
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            return ("error", path, f"not a readable Parquet file ({first})")

    return read


def _coerce(ltype: str, value: Any) -> Any:
    """Bring a footer statistic to the column's logical type (None when impossible)."""
    if value is None:
        return None
    try:
        if ltype == "int":
            return int(value)
        if ltype == "float":
            return float(value)
        if ltype == "decimal":
            return value if isinstance(value, decimal.Decimal) else decimal.Decimal(str(value))
        if ltype == "date":
            if isinstance(value, dt.datetime):
                return value.date()
            return value if isinstance(value, dt.date) else None
        if ltype == "timestamp":
            if isinstance(value, dt.datetime):
                return value
            if isinstance(value, dt.date):
                return dt.datetime(value.year, value.month, value.day)
            return None
        if ltype == "string":
            return value if isinstance(value, str) else str(value)
        if ltype == "bool":
            return bool(value)
    except (TypeError, ValueError, ArithmeticError):
        return None
    return None


def _nan_bounds(lo: float | None, hi: float | None) -> tuple[float | None, float | None]:
    """Float bounds with NaN made safe for pruning. Spark's Parquet
    writer puts NaN into the statistics (max = NaN) where pyarrow leaves NaN out; every
    comparison with NaN is false, so the file would be pruned for every range although
    DuckDB and Spark sort NaN above every number and ``x > 100`` reads its NaN rows. A NaN
    maximum becomes +inf (NaN sorts last); a NaN minimum leaves the bounds unknown.

    >>> _nan_bounds(1.0, float("nan")), _nan_bounds(float("nan"), float("nan"))
    ((1.0, inf), (None, None))
    """
    if lo is not None and math.isnan(lo):
        return None, None
    if hi is not None and math.isnan(hi):
        return lo, math.inf
    return lo, hi


def merge_column_stats(ltype: str, groups: list[tuple[int, dict]],
                       name: str) -> tuple[Any, Any, int | None, int, list]:
    """Merge row-group stats of one column: unknown if any non-empty group lacks min/max."""
    lo = hi = None
    known = ltype != "other"
    nulls: int | None = 0
    cbytes = 0
    per_group = []
    for rows, cols, *_ in groups:
        entry = cols.get(name)
        if entry is None:  # column absent from this file: every value is null
            per_group.append((None, None, rows))
            nulls = None if nulls is None else nulls + rows
            continue
        has, gmin, gmax, gnulls, gbytes = entry
        cbytes += gbytes
        nulls = None if (nulls is None or gnulls is None) else nulls + gnulls
        gmin, gmax = _coerce(ltype, gmin), _coerce(ltype, gmax)
        if ltype == "float":
            gmin, gmax = _nan_bounds(gmin, gmax)
        per_group.append((gmin, gmax, gnulls))
        if has and gmin is not None and gmax is not None:
            if known:
                lo = gmin if lo is None or gmin < lo else lo
                hi = gmax if hi is None or gmax > hi else hi
        elif gnulls is not None and gnulls >= rows:
            continue  # all-null row group: contributes no values, stats stay valid
        else:
            known = False
    if not known:
        lo = hi = None
    return lo, hi, nulls, cbytes, per_group


def _to_partition(raw: tuple, schema: TableSchema, seq: int) -> tuple[Partition, list[RowGroupStats]]:
    _, path, size, rows, groups = raw
    stats: dict[str, ColumnStats] = {}
    per_col: dict[str, list] = {}
    for name, ltype in schema.columns:
        lo, hi, nulls, cbytes, per_group = merge_column_stats(ltype, groups, name)
        stats[name] = ColumnStats(lo, hi, nulls, cbytes)
        per_col[name] = per_group
    rgs = [RowGroupStats(i, groups[i][0], {n: per_col[n][i] for n in per_col},
                         groups[i][2] if len(groups[i]) > 2 else None,
                         {n: int(groups[i][1][n][4]) for n in per_col if n in groups[i][1]})
           for i in range(len(groups))]
    return Partition(path, int(rows), int(size), stats, seq), rgs


def read_raw(paths: Sequence[str]) -> list[tuple]:
    """The :data:`RawReader` of this process: a few threads for more than 16 files."""
    reader = footer_reader()
    if len(paths) > 16:
        with ThreadPoolExecutor(max_workers=_THREADS) as pool:
            return list(pool.map(reader, paths))
    return [reader(p) for p in paths]


def read_schema(path: str) -> TableSchema:
    """The logical schema of one Parquet file (DataFileError if it is not Parquet)."""
    return table_schema_from_arrow(read_arrow_schema(path))


def read_arrow_schema(path: str) -> "pyarrow.Schema":
    filesystem, inner = fs.filesystem(path)
    try:
        with filesystem.open_input_file(inner) as handle:
            return pq.ParquetFile(handle).schema_arrow
    except FileNotFoundError:
        raise DataFileError(f"{path}: no such file") from None
    except Exception as exc:  # noqa: BLE001
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DataFileError(f"{path}: not a readable Parquet file ({first})") from None


def read_footers(paths: Sequence[str], schema: TableSchema | None = None, first_seq: int = 0,
                 raw_reader: RawReader = read_raw) -> FooterResult:
    """Partitions (in the order of ``paths``) plus their row-group statistics; the footers
    are read by ``raw_reader`` (default: this process, see module docstring)."""
    paths = [fs.normalize(p) for p in paths]
    if not paths:
        return FooterResult(schema or TableSchema(()), [], {})
    raws = raw_reader(paths)
    for raw in raws:
        if raw[0] == "error":
            raise DataFileError(f"{raw[1]}: {raw[2]}")
    if schema is None:
        schema = read_schema(paths[0])
    partitions: list[Partition] = []
    row_groups: dict[str, list[RowGroupStats]] = {}
    for i, raw in enumerate(raws):
        part, rgs = _to_partition(raw, schema, first_seq + i)
        partitions.append(part)
        row_groups[part.path] = rgs
    _remember(partitions, row_groups)
    return FooterResult(schema, partitions, row_groups)


def read_partitions(paths: Sequence[str], schema: TableSchema | None = None, first_seq: int = 0,
                    raw_reader: RawReader = read_raw) -> tuple[TableSchema, list[Partition]]:
    """Read the footers of ``paths``: (schema, partitions in path order).

    ``schema`` defaults to the first file's; columns a file lacks get null-only stats.
    Partition ``i`` gets ``created_seq = first_seq + i``. A missing, empty or non-Parquet
    file raises :class:`DataFileError` naming it.
    """
    result = read_footers(paths, schema, first_seq, raw_reader)
    return result.schema, result.partitions


def _remember(partitions: Sequence[Partition], row_groups: dict[str, list[RowGroupStats]]) -> None:
    for p in partitions:
        key = (p.path, p.bytes)
        _ROW_GROUP_CACHE[key] = row_groups[p.path]
        _ROW_GROUP_CACHE.move_to_end(key)
    while len(_ROW_GROUP_CACHE) > _CACHE_LIMIT:
        _ROW_GROUP_CACHE.popitem(last=False)


def row_groups_for(partitions: Sequence[Partition], schema: TableSchema) -> dict[str, list[RowGroupStats]]:
    """Row-group stats of ``partitions``: from the cache, else read from their footers.

    Files that cannot be read any more are left out (their row groups become unknown).
    """
    out: dict[str, list[RowGroupStats]] = {}
    missing = []
    for p in partitions:
        hit = _ROW_GROUP_CACHE.get((p.path, p.bytes))
        if hit is not None:
            out[p.path] = hit
        else:
            missing.append(p)
    if missing:
        raws = read_raw([p.path for p in missing])
        for p, raw in zip(missing, raws):
            if raw[0] == "ok":
                _, rgs = _to_partition(raw, schema, p.created_seq)
                out[p.path] = rgs
    return out


def fill_missing_bounds(partitions: Sequence[Partition], schema: TableSchema,
                        missing: Sequence[str], max_files: int,
                        ) -> tuple[list[Partition], list[str]]:
    """Bounds of the ``missing`` columns (a table format's metadata keeps none for them)
    from the Parquet footers, for tables of at most ``max_files`` files; returns the
    partitions and the columns filled (none when skipped or a file cannot be read)."""
    partitions = list(partitions)
    if not missing or len(partitions) > max_files:
        return partitions, []
    try:
        _, read = read_partitions([p.path for p in partitions], schema)
    except DataFileError:  # a file the metadata names cannot be read: bounds stay unknown
        return partitions, []
    out = []
    for part, foot in zip(partitions, read):
        cols = dict(part.columns)
        for name in missing:
            got, have = foot.columns.get(name), cols[name]
            if got is not None:
                cols[name] = ColumnStats(got.min, got.max,
                                         have.null_count if have.null_count is not None
                                         else got.null_count,
                                         have.compressed_bytes or got.compressed_bytes)
        out.append(Partition(part.path, part.rows, part.bytes, cols, part.created_seq))
    return out, list(missing)
