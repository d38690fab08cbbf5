"""Frozen metadata of a table: column statistics, partitions, snapshots, columnar zonemaps.

This module is pure data (no IO, no Spark). Storage lives in the formats
(``engine.table.formats``), opened through the catalog (``engine.table.store``).

Two views of the same partitions are offered:

* :class:`Partition` objects, convenient for a few partitions and for JSON output;
* :class:`ZoneMaps`, numpy arrays (one entry per partition, snapshot order), which every
  algorithm over many partitions uses (metrics, pruning, policies, simulator).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from engine.core import logical_types
from engine.core.errors import ColumnNotFoundError


@dataclass(frozen=True, slots=True)
class ColumnStats:
    """Zonemap of one column in one partition. ``min``/``max`` None means unknown."""

    min: Any
    max: Any
    null_count: int | None = None
    compressed_bytes: int = 0


@dataclass(frozen=True, slots=True)
class Partition:
    """One micro-partition: one Parquet file."""

    path: str
    rows: int
    bytes: int
    columns: Mapping[str, ColumnStats]
    created_seq: int = 0  # creation order (ingestion or rewrite), for EP-file grouping


@dataclass(frozen=True, slots=True)
class TableSchema:
    """Ordered column names and their logical types (see ``engine.core.logical_types``)."""

    columns: tuple[tuple[str, str], ...]

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.columns]

    def type_of(self, column: str) -> str:
        for name, ltype in self.columns:
            if name == column:
                return ltype
        raise ColumnNotFoundError(f"unknown column {column!r}; columns are: {', '.join(self.names)}")

    def orderable(self) -> list[str]:
        return [n for n, t in self.columns if t in logical_types.ORDERABLE_TYPES]

    def resolve(self, column: str) -> str:
        """The schema's spelling of a column name given case-insensitively."""
        for name, _ in self.columns:
            if name.lower() == column.lower():
                return name
        self.type_of(column)  # raises ColumnNotFoundError
        return column

    def to_json(self) -> list[list[str]]:
        return [list(c) for c in self.columns]

    @classmethod
    def from_json(cls, data: Sequence[Sequence[str]]) -> "TableSchema":
        return cls(tuple((str(n), str(t)) for n, t in data))


@dataclass(frozen=True, slots=True)
class ColumnZoneMap:
    """Encoded min/max of one column across all partitions (see ``engine.core.logical_types``)."""

    ltype: str
    lo: np.ndarray
    hi: np.ndarray
    valid: np.ndarray  # both bounds known
    null_count: np.ndarray  # -1 where unknown
    compressed_bytes: np.ndarray


@dataclass(frozen=True)
class ZoneMaps:
    """Columnar partition metadata: entry i describes ``paths[i]``."""

    paths: np.ndarray  # object array of str
    rows: np.ndarray  # int64
    bytes: np.ndarray  # int64
    columns: Mapping[str, ColumnZoneMap]
    created_seq: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def __len__(self) -> int:
        return len(self.paths)

    def column(self, name: str) -> ColumnZoneMap:
        try:
            return self.columns[name]
        except KeyError:
            raise ColumnNotFoundError(
                f"unknown column {name!r}; columns are: {', '.join(self.columns)}") from None

    def read_bytes(self, columns: Sequence[str] | None) -> np.ndarray:
        """Projection-aware bytes a scan reads per partition: the compressed bytes of
        ``columns`` only (all bytes when ``columns`` is None or no per-column sizes)."""
        if not columns:
            return self.bytes.astype(np.float64)
        total = np.zeros(len(self), dtype=np.float64)
        for name in columns:
            if name in self.columns:
                total += self.columns[name].compressed_bytes
        return np.where(total > 0, total, self.bytes.astype(np.float64))

    def subset(self, keep: np.ndarray) -> "ZoneMaps":
        """The zonemaps of the partitions ``keep`` selects (a boolean mask or indices), in
        table order: what a predicate-scoped metric (Snowflake's
        ``SYSTEM$CLUSTERING_DEPTH(table, cols, predicate)``) is computed over."""
        keep = np.asarray(keep)
        idx = np.flatnonzero(keep) if keep.dtype == bool else keep.astype(np.int64)
        columns = {name: ColumnZoneMap(c.ltype, c.lo[idx], c.hi[idx], c.valid[idx],
                                       c.null_count[idx], c.compressed_bytes[idx])
                   for name, c in self.columns.items()}
        seq = self.created_seq[idx] if len(self.created_seq) == len(self.paths) else self.created_seq
        return ZoneMaps(paths=self.paths[idx], rows=self.rows[idx], bytes=self.bytes[idx],
                        columns=columns, created_seq=seq)

    @classmethod
    def from_partitions(cls, schema: TableSchema, partitions: Sequence[Partition]) -> "ZoneMaps":
        """Build the columnar view from Partition objects (fine up to ~10^5 partitions)."""
        n = len(partitions)
        cols: dict[str, ColumnZoneMap] = {}
        for name, ltype in schema.columns:
            stats = [p.columns.get(name) for p in partitions]
            lo = logical_types.encode_array(ltype, [s.min if s else None for s in stats])
            hi = logical_types.encode_array(ltype, [s.max if s else None for s in stats])
            valid = np.array([s is not None and s.min is not None and s.max is not None
                              for s in stats], dtype=bool)
            nulls = np.array([-1 if s is None or s.null_count is None else s.null_count
                              for s in stats], dtype=np.int64)
            cbytes = np.array([s.compressed_bytes if s else 0 for s in stats], dtype=np.int64)
            cols[name] = ColumnZoneMap(ltype, lo, hi, valid, nulls, cbytes)
        return cls(
            paths=np.array([p.path for p in partitions], dtype=object),
            rows=np.array([p.rows for p in partitions], dtype=np.int64).reshape(n),
            bytes=np.array([p.bytes for p in partitions], dtype=np.int64).reshape(n),
            columns=cols,
            created_seq=np.array([p.created_seq for p in partitions], dtype=np.int64).reshape(n),
        )


@dataclass(frozen=True)
class Snapshot:
    """An immutable version of a table: the full list of its partitions."""

    id: str
    parent: str | None
    created_at: str  # ISO-8601 UTC
    operation: str  # create | register | append | recluster | rollback
    table: str
    schema: TableSchema
    partitions: tuple[Partition, ...]
    summary: Mapping[str, Any] = field(default_factory=dict)

    @property
    def partition_count(self) -> int:
        return len(self.partitions)

    @property
    def total_rows(self) -> int:
        """Summed from the zonemap arrays (stores set them when they load a snapshot): a
        walk over one Partition object per partition would cost seconds at a million."""
        return int(self.zonemaps().rows.sum())

    @property
    def total_bytes(self) -> int:
        return int(self.zonemaps().bytes.sum())

    def zonemaps(self) -> ZoneMaps:
        """Columnar view, computed once per snapshot object."""
        cached = self.__dict__.get("_zonemaps")
        if cached is None:
            cached = ZoneMaps.from_partitions(self.schema, self.partitions)
            object.__setattr__(self, "_zonemaps", cached)
        return cached
