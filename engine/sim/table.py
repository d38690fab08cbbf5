"""An in-memory micro-partitioned table for the simulator.

Rows live once, in the scenario's encoded numpy columns (shared read-only by every
simulated policy); a table is the assignment of row ids to partitions plus each
partition's zonemap. Partitions are immutable: ingestion appends new ones, a rewrite
retires some and appends their replacements, exactly like files in a snapshot.

Zonemaps are built vectorized from the rows (``np.minimum.reduceat`` over the row ids in
partition order), never through :class:`engine.table.model.Partition` objects, so a batch
of thousands of partitions costs a few milliseconds. Cutting follows the executor: a run
of ``R`` ordered rows becomes ``ceil(R / target_rows)`` partitions of near-equal size.

A rewrite may also give its partitions row groups with their own min/max (PAW's precise
descriptors written as STR row groups, seed 001 §V-A): the simulator then prices a query on
those partitions by the row groups it meets (:mod:`engine.sim.scan`).

Per-column bytes are ``rows * width[column]`` (compressed bytes per row), so scans are
projection-aware through :meth:`engine.table.model.ZoneMaps.read_bytes`. Columns with
no data in the dataset (payload such as comments) have widths but no statistics: their
zonemap bounds are unknown (``valid`` False), which pruning treats as "might match".
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from engine.core import logical_types
from engine.core.errors import InvalidParameterError
from engine.layout.cuts import cut_points
from engine.table.model import ColumnZoneMap, TableSchema, ZoneMaps

PATH_PREFIX = "sim/part-"


class _Grow:
    """An append-only numpy array with amortized doubling."""

    def __init__(self, dtype: type | np.dtype, fill: float | int | bool = 0) -> None:
        self.buf = np.full(64, fill, dtype=dtype)
        self.n = 0
        self.fill = fill

    def extend(self, arr: np.ndarray) -> None:
        need = self.n + len(arr)
        if need > len(self.buf):
            cap = max(need, 2 * len(self.buf))
            new = np.full(cap, self.fill, dtype=self.buf.dtype)
            new[: self.n] = self.buf[: self.n]
            self.buf = new
        self.buf[self.n:need] = arr
        self.n = need

    @property
    def view(self) -> np.ndarray:
        return self.buf[: self.n]


def build_zonemap_arrays(data: Mapping[str, np.ndarray], rows: np.ndarray, starts: np.ndarray,
                         columns: Sequence[str]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per-column (min, max) of each chunk ``rows[starts[i]:starts[i+1]]`` (vectorized)."""
    out = {}
    for col in columns:
        v = data[col][rows]
        out[col] = (np.minimum.reduceat(v, starts), np.maximum.reduceat(v, starts))
    return out


class SimTable:
    """Partitions of one simulated table (one instance per policy run)."""

    def __init__(self, schema: TableSchema, data: Mapping[str, np.ndarray],
                 widths: Mapping[str, float], target_rows: int) -> None:
        if target_rows < 1:
            raise InvalidParameterError(f"target_rows must be >= 1, got {target_rows}")
        self.schema = schema
        self.data = data
        self.types = dict(schema.columns)
        self.widths = {c: float(widths.get(c, 0.0)) for c in schema.names}
        self.target_rows = int(target_rows)
        self.stat_columns = [c for c in schema.names if c in data and data[c].dtype.kind != "U"]
        self._rows: list[np.ndarray] = []  # row ids of each partition, in stored order
        self._nrows = _Grow(np.int64)
        self._paths = _Grow(object, None)
        self._live = _Grow(bool, False)
        self._lo = {c: _Grow(np.float64, np.nan) for c in self.stat_columns}
        self._hi = {c: _Grow(np.float64, np.nan) for c in self.stat_columns}
        self._rg_pid = _Grow(np.int64)  # row groups (only partitions written with them)
        self._rg_rows = _Grow(np.int64)
        self._rg_lo = {c: _Grow(np.float64, np.nan) for c in self.stat_columns}
        self._rg_hi = {c: _Grow(np.float64, np.nan) for c in self.stat_columns}
        self.version = 0
        self._rg_cache: tuple[int, "tuple[ZoneMaps, np.ndarray] | None"] | None = None
        self._zm_cache: tuple[int, ZoneMaps, np.ndarray] | None = None

    # ---------------------------------------------------------------- identity
    @staticmethod
    def path(pid: int) -> str:
        return f"{PATH_PREFIX}{pid:07d}"

    @staticmethod
    def pid_of(path: str) -> int:
        if not path.startswith(PATH_PREFIX):
            raise InvalidParameterError(f"{path!r} is not a partition of the simulated table")
        return int(path[len(PATH_PREFIX):])

    @property
    def n_partitions(self) -> int:
        return int(self._live.view.sum())

    @property
    def next_pid(self) -> int:
        """The id the next new partition will get (ids only grow)."""
        return len(self._rows)

    @property
    def live_pids(self) -> np.ndarray:
        return np.flatnonzero(self._live.view)

    def rows_of(self, pid: int) -> np.ndarray:
        return self._rows[pid]

    def total_rows(self) -> int:
        return int(self._nrows.view[self._live.view].sum())

    # ---------------------------------------------------------------- changes
    def _append(self, ordered_rows: np.ndarray, segments: np.ndarray | None = None,
                row_groups: np.ndarray | None = None) -> np.ndarray:
        """Cut ``ordered_rows`` to target size and append the partitions; returns new pids.

        ``segments`` (start offsets) are cut independently (a Qd-tree's leaves), so no
        partition straddles two segments; a segment becomes ``floor(rows / target)``
        partitions (at least one), so leaves keep the Qd-tree's minimum block size.
        ``row_groups`` (start offsets, a refinement of the partitions' starts) gives the new
        partitions row groups with their own statistics.
        """
        if segments is None or len(segments) <= 1:
            starts = cut_points(len(ordered_rows), self.target_rows)
        else:
            seg = np.append(np.asarray(segments, dtype=np.int64), len(ordered_rows))
            starts = np.concatenate([seg[i] + cut_points(int(seg[i + 1] - seg[i]), self.target_rows, True)
                                     for i in range(len(seg) - 1)])
        if starts.size == 0:
            return np.zeros(0, dtype=np.int64)
        first = len(self._rows)
        bounds = np.append(starts, len(ordered_rows))
        for i in range(len(starts)):
            self._rows.append(ordered_rows[bounds[i]:bounds[i + 1]])
        self._nrows.extend(np.diff(bounds))
        self._paths.extend(np.array([self.path(p) for p in range(first, first + len(starts))], dtype=object))
        self._live.extend(np.ones(len(starts), dtype=bool))
        for col, (lo, hi) in build_zonemap_arrays(self.data, ordered_rows, starts, self.stat_columns).items():
            self._lo[col].extend(lo)
            self._hi[col].extend(hi)
        if row_groups is not None and len(row_groups):
            self._add_row_groups(ordered_rows, np.asarray(row_groups, dtype=np.int64), starts, first)
        self.version += 1
        return np.arange(first, first + len(starts), dtype=np.int64)

    def _add_row_groups(self, ordered_rows: np.ndarray, rg_starts: np.ndarray, starts: np.ndarray,
                        first: int) -> None:
        if not np.isin(starts, rg_starts).all():
            raise InvalidParameterError("row groups must not straddle two partitions")
        self._rg_pid.extend(first + np.searchsorted(starts, rg_starts, side="right") - 1)
        self._rg_rows.extend(np.diff(np.append(rg_starts, len(ordered_rows))))
        for col, (lo, hi) in build_zonemap_arrays(self.data, ordered_rows, rg_starts, self.stat_columns).items():
            self._rg_lo[col].extend(lo)
            self._rg_hi[col].extend(hi)

    def ingest(self, start: int, stop: int) -> np.ndarray:
        """Append rows ``[start, stop)`` in natural (ingestion) order."""
        return self._append(np.arange(start, stop, dtype=np.int64))

    def replace(self, old_pids: Sequence[int], ordered_rows: np.ndarray,
                segments: np.ndarray | None = None, row_groups: np.ndarray | None = None) -> np.ndarray:
        """Retire ``old_pids`` and append ``ordered_rows`` (which must be exactly their rows),
        with ``row_groups`` (start offsets) when the new partitions are written with them."""
        old = np.asarray(old_pids, dtype=np.int64)
        if old.size and not self._live.view[old].all():
            raise InvalidParameterError("a rewrite names a partition that is no longer live")
        self._live.buf[old] = False
        return self._append(ordered_rows, segments, row_groups)

    def gather(self, pids: Sequence[int]) -> np.ndarray:
        return np.concatenate([self._rows[p] for p in pids]) if len(pids) else np.zeros(0, np.int64)

    # ---------------------------------------------------------------- metadata
    def zonemaps(self) -> tuple[ZoneMaps, np.ndarray]:
        """The live partitions as :class:`ZoneMaps` (creation order) and their pids."""
        if self._zm_cache is not None and self._zm_cache[0] == self.version:
            return self._zm_cache[1], self._zm_cache[2]
        pids = self.live_pids
        zm = self.zonemaps_of(pids)
        self._zm_cache = (self.version, zm, pids)
        return zm, pids

    def zonemaps_of(self, pids: np.ndarray) -> ZoneMaps:
        """ZoneMaps of any partitions (live or retired), in the given order."""
        return self._zonemaps(self._nrows.view[pids], {c: (self._lo[c].view[pids], self._hi[c].view[pids])
                                                       for c in self._lo}, self._paths.view[pids], pids)

    def row_group_zonemaps(self) -> tuple[ZoneMaps, np.ndarray] | None:
        """The row groups of the live partitions written with them, as :class:`ZoneMaps`
        (one entry per row group), and each one's position in :meth:`zonemaps`; ``None``
        when no live partition has row groups."""
        if self._rg_cache is not None and self._rg_cache[0] == self.version:
            return self._rg_cache[1]
        out = self.row_group_zonemaps_of(self.zonemaps()[1]) if self._rg_pid.n else None
        self._rg_cache = (self.version, out)
        return out

    def row_group_zonemaps_of(self, pids: np.ndarray) -> tuple[ZoneMaps, np.ndarray] | None:
        """The row groups of the partitions ``pids`` (sorted, live or retired) that have
        them, and each one's position in ``pids``; ``None`` when none has."""
        pids = np.asarray(pids, dtype=np.int64)
        pid = self._rg_pid.view
        keep = np.flatnonzero(np.isin(pid, pids))
        if not keep.size:
            return None
        zm = self._zonemaps(self._rg_rows.view[keep], {c: (self._rg_lo[c].view[keep], self._rg_hi[c].view[keep])
                                                       for c in self._rg_lo},
                            self._paths.view[pid[keep]], pid[keep])
        return zm, np.searchsorted(pids, pid[keep])

    def _zonemaps(self, rows: np.ndarray, bounds: Mapping[str, tuple[np.ndarray, np.ndarray]],
                  paths: np.ndarray, seq: np.ndarray) -> ZoneMaps:
        n = len(rows)
        cols: dict[str, ColumnZoneMap] = {}
        total = np.zeros(n, dtype=np.int64)
        for name, ltype in self.schema.columns:
            cbytes = np.round(rows * self.widths[name]).astype(np.int64)
            total += cbytes
            if name in bounds:
                lo, hi = bounds[name]
                valid = np.ones(n, dtype=bool)
            else:
                lo = hi = logical_types.empty_array(ltype, n)
                valid = np.zeros(n, dtype=bool)
            cols[name] = ColumnZoneMap(ltype, lo, hi, valid, np.zeros(n, dtype=np.int64), cbytes)
        return ZoneMaps(paths=paths, rows=np.asarray(rows).astype(np.int64), bytes=total, columns=cols,
                        created_seq=np.asarray(seq, dtype=np.int64))
