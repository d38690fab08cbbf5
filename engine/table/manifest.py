"""Snapshot manifests as Parquet: one row per partition, typed statistics per column.

Why Parquet and not JSON: a manifest of 100,000 partitions x 16 columns holds millions of
statistics. Stored typed and columnar, it loads in tens of milliseconds, and the columnar
:class:`~engine.table.model.ZoneMaps` view is built straight from the Arrow arrays without
touching a Python object per value. ``Partition`` objects are still produced (the snapshot
contract), but their per-column statistics are materialised lazily on first access.

Column ``i`` of the table schema is stored as ``c{i}_min``, ``c{i}_max``, ``c{i}_nulls``,
``c{i}_cbytes`` (the schema itself, with names, sits in the snapshot header).
Decimals are stored as strings (exact, any precision); other types natively.
"""

from __future__ import annotations

import decimal
from collections.abc import Mapping
from collections.abc import Sequence as SequenceABC
from typing import Any, Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.core import logical_types
from engine.table.model import ColumnStats, ColumnZoneMap, Partition, TableSchema, ZoneMaps

BASE_FIELDS = ("path", "rows", "bytes", "created_seq", "rg_file")


def arrow_type(ltype: str) -> Any:
    return {
        "int": pa.int64(), "float": pa.float64(), "decimal": pa.string(), "date": pa.date32(),
        "timestamp": pa.timestamp("us"), "string": pa.string(), "bool": pa.bool_(),
    }.get(ltype, pa.string())


def stat_value(ltype: str, value: Any) -> Any:
    """A column bound as the manifest stores it: decimals as strings, None when unknown
    (an unorderable type, an integer beyond int64).

    >>> stat_value("decimal", 1), stat_value("other", 3), stat_value("int", 2**64)
    ('1', None, None)
    """
    if value is None:
        return None
    if ltype == "decimal":
        return str(value)
    if ltype == "other":
        return None
    if ltype == "int" and not (-(2**63) <= int(value) < 2**63):
        return None  # uint64 beyond int64: treat as unknown
    return value


def manifest_schema(schema: TableSchema) -> Any:
    fields = [pa.field("path", pa.string()), pa.field("rows", pa.int64()),
              pa.field("bytes", pa.int64()), pa.field("created_seq", pa.int64()),
              pa.field("rg_file", pa.string())]
    for i, (_, ltype) in enumerate(schema.columns):
        t = arrow_type(ltype)
        fields += [pa.field(f"c{i}_min", t), pa.field(f"c{i}_max", t),
                   pa.field(f"c{i}_nulls", pa.int64()), pa.field(f"c{i}_cbytes", pa.int64())]
    return pa.schema(fields)


class ManifestData:
    """A loaded manifest: the Arrow table plus lazily converted Python columns."""

    def __init__(self, schema: TableSchema, table: Any) -> None:
        self.schema = schema
        self.table = table
        self.index = {name: i for i, (name, _) in enumerate(schema.columns)}
        self._py: dict[str, list] = {}

    def column_list(self, key: str, ltype: str | None = None) -> list:
        cached = self._py.get(key)
        if cached is None:
            cached = self.table.column(key).to_pylist()
            if ltype == "decimal":
                cached = [None if v is None else decimal.Decimal(v) for v in cached]
            self._py[key] = cached
        return cached

    def stats(self, name: str, row: int) -> ColumnStats:
        i = self.index[name]
        ltype = self.schema.columns[i][1]
        return ColumnStats(self.column_list(f"c{i}_min", ltype)[row],
                           self.column_list(f"c{i}_max", ltype)[row],
                           self.column_list(f"c{i}_nulls")[row],
                           self.column_list(f"c{i}_cbytes")[row] or 0)


class LazyColumns(Mapping):
    """``Partition.columns`` backed by a manifest row; ColumnStats built on access."""

    __slots__ = ("_data", "_row")

    def __init__(self, data: ManifestData, row: int) -> None:
        self._data = data
        self._row = row

    def __getitem__(self, name: str) -> ColumnStats:
        if name not in self._data.index:
            raise KeyError(name)
        return self._data.stats(name, self._row)

    def __iter__(self) -> Iterator[str]:
        return iter(self._data.index)

    def __len__(self) -> int:
        return len(self._data.index)

    def __contains__(self, name: object) -> bool:
        return name in self._data.index

    def __repr__(self) -> str:
        return repr(dict(self.items()))

    def __reduce__(self):  # pickle as a plain dict, never the whole manifest
        return (dict, (dict(self.items()),))


def partitions_to_table(schema: TableSchema, partitions: Sequence[Partition],
                        rg_files: Mapping[str, str | None] | None = None) -> Any:
    """Arrow manifest table for ``partitions`` (rows copied columnar where possible).

    Partitions loaded from a manifest of the same schema are gathered with ``take`` from
    their source tables, so committing a change to a 100k-partition table stays fast.
    """

    target = manifest_schema(schema)
    rg_files = rg_files or {}
    sources: dict[int, tuple[ManifestData, list[int], list[int]]] = {}
    fresh: list[tuple[int, Partition]] = []
    for pos, p in enumerate(partitions):
        cols = p.columns
        if (isinstance(cols, LazyColumns) and cols._data.schema == schema
                and p.path not in rg_files):
            src = sources.setdefault(id(cols._data), (cols._data, [], []))
            src[1].append(cols._row)
            src[2].append(pos)
        else:
            fresh.append((pos, p))
    pieces, order = [], []
    for data, rows, positions in sources.values():
        piece = data.table.take(pa.array(rows, pa.int64())).cast(target)
        seqs = [partitions[pos].created_seq for pos in positions]
        piece = piece.set_column(piece.schema.get_field_index("created_seq"), "created_seq",
                                 pa.array(seqs, pa.int64()))
        pieces.append(piece)
        order.extend(positions)
    if fresh:
        pieces.append(_fresh_table(schema, [p for _, p in fresh], rg_files, target))
        order.extend(pos for pos, _ in fresh)
    if not pieces:
        return target.empty_table()
    table = pa.concat_tables(pieces) if len(pieces) > 1 else pieces[0]
    inverse = np.empty(len(order), dtype=np.int64)
    inverse[np.asarray(order, dtype=np.int64)] = np.arange(len(order), dtype=np.int64)
    return table.take(pa.array(inverse))


def splice(schema: TableSchema, base: Any, removed: np.ndarray, added: Sequence[Partition],
           rg_files: Mapping[str, str | None] | None = None) -> Any:
    """The manifest of a commit, straight from the base manifest's Arrow table: ``base``
    without its rows where ``removed`` (bool per row) is True, and ``added`` in the slot of
    the first removed row (appended when none is). The same table
    :func:`partitions_to_table` makes of that list of partitions, without a
    :class:`Partition` per kept row: at 1,000,000 partitions those walks would be most of
    a commit (bench/planning/README.md)."""
    target = manifest_schema(schema)
    removed = np.asarray(removed, dtype=bool).reshape(base.num_rows)
    kept = base.cast(target)
    # as partitions_to_table: created_seq as the snapshot's partitions carry it
    kept = kept.set_column(kept.schema.get_field_index("created_seq"), "created_seq",
                           pa.array(_int_column(base, "created_seq"), pa.int64()))
    gone = np.flatnonzero(removed)
    at = int(gone[0]) if len(gone) else base.num_rows
    keep = np.flatnonzero(~removed)
    pieces = [kept.take(pa.array(keep[keep < at]))]
    if added:
        pieces.append(_fresh_table(schema, added, rg_files or {}, target))
    pieces.append(kept.take(pa.array(keep[keep >= at])))
    return pa.concat_tables(pieces).combine_chunks()


def _fresh_table(schema: TableSchema, parts: Sequence[Partition],
                 rg_files: Mapping[str, str | None], target: Any) -> Any:
    data: dict[str, Any] = {
        "path": [p.path for p in parts], "rows": [int(p.rows) for p in parts],
        "bytes": [int(p.bytes) for p in parts], "created_seq": [int(p.created_seq) for p in parts],
        "rg_file": [rg_files.get(p.path) for p in parts],
    }
    for i, (name, ltype) in enumerate(schema.columns):
        stats = [p.columns.get(name) for p in parts]
        data[f"c{i}_min"] = [None if s is None else stat_value(ltype, s.min) for s in stats]
        data[f"c{i}_max"] = [None if s is None else stat_value(ltype, s.max) for s in stats]
        data[f"c{i}_nulls"] = [None if s is None else s.null_count for s in stats]
        data[f"c{i}_cbytes"] = [0 if s is None else int(s.compressed_bytes or 0) for s in stats]
    return pa.Table.from_pydict(data, schema=target)


class ManifestPartitions(SequenceABC):
    """A snapshot's partitions backed by its manifest: :class:`Partition` objects are made
    on access, never all at load (a million of them cost seconds to build, and the
    algorithms read :class:`ZoneMaps` anyway). Indexing, slicing, ``len`` and iteration
    behave as on the tuple this replaces; every object made for row i shares the same
    :class:`ManifestData`, so :func:`partitions_to_table` still gathers them columnar.

    ``table`` is the manifest's Arrow table, or a callable reading it: with ``zonemaps``
    (the snapshot's arrays, e.g. from :mod:`engine.table.zonemap_cache`) the manifest is
    then read only when a partition's per-column statistics are first asked for, so a
    process that only reads zonemaps never reads it.
    """

    def __init__(self, schema: TableSchema, table: Any, zonemaps: ZoneMaps | None = None) -> None:
        self._schema = schema
        self._source = table
        self._loaded: ManifestData | None = None
        if zonemaps is not None:
            self._n = len(zonemaps)
            self._rows, self._bytes = zonemaps.rows, zonemaps.bytes
            self._seqs = (zonemaps.created_seq if len(zonemaps.created_seq) == self._n
                          else np.zeros(self._n, dtype=np.int64))
            self._paths: Any = zonemaps.paths
        else:
            table = self._data.table
            self._n = table.num_rows
            self._rows = _int_column(table, "rows")
            self._bytes = _int_column(table, "bytes")
            self._seqs = _int_column(table, "created_seq")
            self._paths = None

    @property
    def _data(self) -> ManifestData:
        """The manifest, read on first use when it was given as a callable."""
        if self._loaded is None:
            table = self._source() if callable(self._source) else self._source
            self._loaded = ManifestData(self._schema, table)
        return self._loaded

    def __len__(self) -> int:
        return self._n

    def _path_list(self) -> Any:
        if self._paths is None:
            self._paths = self._data.table.column("path").to_pylist()
        return self._paths

    def _one(self, i: int) -> Partition:
        return Partition(str(self._path_list()[i]), int(self._rows[i]), int(self._bytes[i]),
                         LazyColumns(self._data, i), int(self._seqs[i]))

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return tuple(self._one(j) for j in range(*i.indices(self._n)))
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(i)
        return self._one(int(i))

    def __iter__(self) -> Iterator[Partition]:
        return (self._one(i) for i in range(self._n))

    def column_lists(self, name: str) -> tuple[list, list, list]:
        """Column ``name``'s ``(mins, maxs, null counts)`` of every partition in order, as
        ``partition.columns[name]`` gives them one by one, without a :class:`Partition`
        or :class:`ColumnStats` per row (a walk made 1,000,000 of each)."""
        data = self._data
        i = data.index[name]
        ltype = self._schema.columns[i][1]
        return (data.column_list(f"c{i}_min", ltype), data.column_list(f"c{i}_max", ltype),
                data.column_list(f"c{i}_nulls"))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (ManifestPartitions, tuple, list)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ManifestPartitions({self._n} partitions)"


def _int_column(table: Any, name: str) -> np.ndarray:
    return np.asarray(table.column(name).to_numpy(), dtype=np.int64).reshape(table.num_rows)


def table_to_partitions(schema: TableSchema, table: Any,
                        zonemaps: ZoneMaps | None = None) -> ManifestPartitions:
    """The snapshot's partitions, made lazily from the manifest rows (``table`` may be a
    callable reading the manifest when ``zonemaps`` are given: :class:`ManifestPartitions`)."""
    return ManifestPartitions(schema, table, zonemaps)


def table_to_zonemaps(schema: TableSchema, table: Any) -> ZoneMaps:
    """The columnar view straight from Arrow arrays (no per-value Python work)."""

    n = table.num_rows
    cols: dict[str, ColumnZoneMap] = {}
    for i, (name, ltype) in enumerate(schema.columns):
        lo_arr, hi_arr = table.column(f"c{i}_min"), table.column(f"c{i}_max")
        if ltype == "other":
            lo = logical_types.empty_array("float", n)
            hi = logical_types.empty_array("float", n)
            valid = np.zeros(n, dtype=bool)
        else:
            (lo, lo_valid), (hi, hi_valid) = _encode_bound(ltype, lo_arr), _encode_bound(ltype, hi_arr)
            valid = lo_valid & hi_valid
        nulls = np.asarray(pc.fill_null(table.column(f"c{i}_nulls"), -1).to_numpy(), dtype=np.int64)
        cbytes = np.asarray(pc.fill_null(table.column(f"c{i}_cbytes"), 0).to_numpy(), dtype=np.int64)
        cols[name] = ColumnZoneMap(ltype, lo, hi, valid, nulls, cbytes)
    return ZoneMaps(
        paths=_path_array(table),
        rows=_int_column(table, "rows"),
        bytes=_int_column(table, "bytes"),
        columns=cols,
        created_seq=_int_column(table, "created_seq"),
    )


def _encode_bound(ltype: str, array: Any) -> tuple[np.ndarray, np.ndarray]:
    """(encoded, valid) of one min or max column: strings through :func:`unicode_array`
    (no Python object per value), decimals (stored as strings) cast to float64 by Arrow,
    dates and timestamps cast by Arrow (``logical_types.encode_arrow``)."""
    if ltype == "string":
        return unicode_array(array)
    if ltype == "decimal":
        return logical_types.encode_arrow("float", pc.cast(array, pa.float64()))
    return logical_types.encode_arrow(ltype, array)


def unicode_array(array: Any) -> tuple[np.ndarray, np.ndarray]:
    """(numpy unicode array, valid mask) of an Arrow string column, equal value for value
    to ``logical_types.encode_arrow("string", array)`` (nulls read ""), built without a
    Python ``str`` per value.

    An ASCII column is right-padded with NUL bytes by Arrow to its longest value, so its
    bytes are one fixed-width block that numpy reads as ``S<width>`` and widens to
    ``U<width>`` in C (numpy drops trailing NULs, as it does on the object path). It is
    faster than going through Python objects (bench/planning/README.md). A column holding any non-ASCII byte is decoded from
    UTF-8 by :func:`utf8_array`, in numpy too.

    >>> unicode_array(pa.chunked_array([["b", None], ["", "abc"]]))[0].tolist()
    ['b', '', '', 'abc']
    """
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks() if array.num_chunks else pa.array([], pa.string())
    if not pa.types.is_string(array.type):
        return logical_types.encode_arrow("string", array)
    if not _ascii(array):
        return utf8_array(array)
    n = len(array)
    valid = np.asarray(pc.is_valid(array).to_numpy(zero_copy_only=False), dtype=bool)
    filled = pc.fill_null(array, "")
    width = max(int(pc.max(pc.binary_length(filled)).as_py() or 0), 1)
    padded = pc.ascii_rpad(filled, width=width, padding="\x00")
    offsets = np.frombuffer(padded.buffers()[1], dtype=np.int32, count=n + 1, offset=padded.offset * 4)
    data = _string_bytes(padded)[offsets[0]:offsets[-1]] if n else np.zeros(0, np.uint8)
    return data.view(f"S{width}").astype(f"U{width}"), valid


def utf8_array(array: Any) -> tuple[np.ndarray, np.ndarray]:
    """(numpy unicode array, valid mask) of an Arrow string array holding non-ASCII text,
    decoded from its UTF-8 buffer with numpy (no Python ``str`` per value): each lead byte
    starts a code point of 1 to 4 bytes (RFC 3629: ``0xxxxxxx``, ``110xxxxx``,
    ``1110xxxx``, ``11110xxx``, then ``10xxxxxx`` continuation bytes), whose payload bits
    are shifted together; code point j of string i lands in row i, column j of a uint32
    matrix as wide as the longest string, which numpy reads as ``U<width>`` (UTF-32, and
    trailing NULs dropped, as on the object path). Arrow has validated the UTF-8 already.
    Equal value for value to ``logical_types.encode_arrow("string", array)`` (property
    test in tests/engine/table/test_scale_manifest.py).

    >>> utf8_array(pa.array(["é", None, "東京🦆", "a"]))[0].tolist()
    ['é', '', '東京🦆', 'a']
    """
    n = len(array)
    valid = np.asarray(pc.is_valid(array).to_numpy(zero_copy_only=False), dtype=bool)
    filled = pc.fill_null(array, "")
    offsets = np.frombuffer(filled.buffers()[1], dtype=np.int32, count=n + 1,
                            offset=filled.offset * 4).astype(np.int64)
    data = _string_bytes(filled)[offsets[0]:offsets[-1]] if n else np.zeros(0, np.uint8)
    offsets -= offsets[0]
    lead_byte = (data & 0xC0) != 0x80
    starts = np.flatnonzero(lead_byte)  # each code point's lead byte
    code = data[starts].astype(np.uint32)  # ASCII code points are their byte
    multi = np.flatnonzero(code >= 0xC0)  # the few longer ones: payload bits joined
    lead = code[multi]
    size = 2 + (lead >= 0xE0) + (lead >= 0xF0)  # bytes per code point
    lead &= np.array([0, 0, 0x1F, 0x0F, 0x07], dtype=np.uint32)[size]
    for k in (1, 2, 3):
        more = np.flatnonzero(size > k)
        lead[more] = (lead[more] << 6) | (data[starts[multi[more]] + k] & 0x3F)
    code[multi] = lead
    # code points before string i: its byte offset less the continuation bytes before it
    before = offsets - np.searchsorted(np.flatnonzero(~lead_byte), offsets)
    first_code, count = before[:-1], np.diff(before)
    width = max(int(count.max()) if n else 0, 1)
    index = np.int32 if n * width < 2**31 else np.int64
    shift = np.arange(n, dtype=index) * width - first_code.astype(index)
    out = np.zeros(n * width, dtype=np.uint32)
    out[np.arange(len(code), dtype=index) + np.repeat(shift, count)] = code
    return out.view(np.dtype(f"U{width}")), valid


def _string_bytes(array: Any) -> np.ndarray:
    """The data buffer of an Arrow string array as uint8 (empty when it has none)."""
    buf = array.buffers()[2]
    return np.frombuffer(buf, dtype=np.uint8) if buf is not None else np.zeros(0, np.uint8)


def _ascii(array: Any) -> bool:
    """True when every byte the values of ``array`` use is below 0x80."""
    if not len(array):
        return True
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int32, count=len(array) + 1, offset=array.offset * 4)
    used = _string_bytes(array)[offsets[0]:offsets[-1]]
    return not used.size or int(used.max()) < 0x80


def _path_array(table: Any) -> np.ndarray:
    """Object array of the partition paths (Arrow's own conversion: no intermediate list)."""
    col = table.column("path")
    out = col.to_numpy(zero_copy_only=False) if col.num_chunks else np.zeros(0, dtype=object)
    return np.asarray(out, dtype=object).reshape(table.num_rows)


def row_groups_table(schema: TableSchema, row_groups: Mapping[str, Sequence[Any]]) -> Any:
    """Arrow table of row-group statistics: one row per (path, row group)."""

    fields = [pa.field("path", pa.string()), pa.field("row_group", pa.int32()),
              pa.field("rows", pa.int64())]
    for i, (_, ltype) in enumerate(schema.columns):
        t = arrow_type(ltype)
        fields += [pa.field(f"c{i}_min", t), pa.field(f"c{i}_max", t), pa.field(f"c{i}_nulls", pa.int64()),
                   pa.field(f"c{i}_bytes", pa.int64())]
    data: dict[str, list] = {f.name: [] for f in fields}
    for path, groups in row_groups.items():
        for g in groups:
            data["path"].append(path)
            data["row_group"].append(g.index)
            data["rows"].append(int(g.rows))
            sizes = getattr(g, "column_bytes", None) or {}
            for i, (name, ltype) in enumerate(schema.columns):
                lo, hi, nulls = g.columns.get(name, (None, None, None))
                data[f"c{i}_min"].append(stat_value(ltype, lo))
                data[f"c{i}_max"].append(stat_value(ltype, hi))
                data[f"c{i}_nulls"].append(nulls)
                data[f"c{i}_bytes"].append(sizes.get(name))
    return pa.Table.from_pydict(data, schema=pa.schema(fields))


def row_groups_to_zonemaps(schema: TableSchema, table: Any) -> ZoneMaps:
    """Row-group statistics (:func:`row_groups_table`'s rows) as zonemaps: one entry per
    row group, its file's path in ``paths``, its index in ``created_seq``, each column
    chunk's compressed bytes as the column's size and their sum as ``bytes``. Row-group
    files written before the sizes were kept (no ``c<i>_bytes``, or null) give 0: then
    ``engine.scan.rowgroups`` shares a file's bytes among its row groups by rows. Encoded
    by :func:`table_to_zonemaps` itself."""
    total = np.zeros(table.num_rows, dtype=np.int64)
    for i in range(len(schema.columns)):
        name = f"c{i}_bytes"
        sizes = (np.asarray(pc.fill_null(table.column(name), 0).to_numpy(zero_copy_only=False), dtype=np.int64)
                 if name in table.column_names else np.zeros(table.num_rows, dtype=np.int64))
        total += sizes
        table = table.append_column(f"c{i}_cbytes", pa.array(sizes))
    table = table.append_column("bytes", pa.array(total))
    table = table.append_column("created_seq", pc.cast(table.column("row_group"), pa.int64()))
    return table_to_zonemaps(schema, table)


def row_groups_from_table(schema: TableSchema, table: Any,
                          wanted: set[str] | None = None) -> dict[str, list[dict]]:
    """{path: [{"row_group", "rows", "columns": {COL: {"min", "max", "nulls"}}}]}."""
    out: dict[str, list[dict]] = {}
    rows = table.to_pylist()
    for r in rows:
        if wanted is not None and r["path"] not in wanted:
            continue
        cols = {}
        for i, (name, ltype) in enumerate(schema.columns):
            lo, hi = r[f"c{i}_min"], r[f"c{i}_max"]
            if ltype == "decimal":
                lo = None if lo is None else decimal.Decimal(lo)
                hi = None if hi is None else decimal.Decimal(hi)
            cols[name] = {"min": lo, "max": hi, "nulls": r[f"c{i}_nulls"]}
        out.setdefault(r["path"], []).append({"row_group": r["row_group"], "rows": r["rows"], "columns": cols})
    return out
