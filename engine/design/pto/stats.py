"""Workload statistics from the table's scan fragments (PTO section 3.1, Table 1).

Per fragment: its filter columns (``predicated_columns``) and its selectivity =
rowsOut / tableCardinality x 100%, with rowsOut an exact count of matching rows over the
data at hand. Per column: the filter-column frequency f(c) (fragments whose filter uses c)
and avgSel(c) (mean selectivity over those fragments). Per column set S: the union
statistics of Figure 4 (fragments using any column of S). NDV: an exact count of distinct
non-NULL values at our scale (ours; PTO reads Iceberg ``$files``), always the *table's*: a
design sample (``max_design_rows``) sees a fraction of a column's values, so its counts would
let a 5,000-value column through the 4,000-partition guardrail; the caller passes the
table's counts (``ndv=``) when the rows held are a sample.

Example:
>>> import numpy as np
>>> from engine.workload.model import Range, ScanFragment
>>> from engine.design.pto.data import TableData
>>> t = TableData({"x": np.arange(100.0)}, {"x": "int"}, 100)
>>> f = ScanFragment("q1", "t", ({"x": Range(10, 19)},), ("x",))
>>> s = WorkloadStats.compute(t, [f])
>>> s.freq["x"], s.avg_sel["x"], s.ndv["x"]
(1, 10.0, 100)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

import numpy as np

from engine.design.pto import goodturing
from engine.design.pto.data import EncodedBox, TableData, boxes_key, row_matches
from engine.workload.model import ScanFragment


@dataclass(frozen=True)
class FragmentStat:
    """One scan fragment as PTO uses it."""

    query_id: str
    columns: frozenset[str]  # filter columns held in the data
    boxes: tuple[EncodedBox, ...]
    selectivity: float  # percent


@dataclass(frozen=True)
class UnionStats:
    """Statistics of the fragments using any column of a set (Figure 4's sort vector)."""

    n_queries: int
    avg_sel: float
    min_sel: float
    max_sel: float
    median_sel: float


@dataclass
class WorkloadStats:
    """f(c), avgSel(c), NDV(c) and the per-fragment facts of one table's workload."""

    fragments: list[FragmentStat]
    freq: dict[str, int]
    avg_sel: dict[str, float]
    ndv: dict[str, int]
    _by_columns: tuple | None = field(default=None, repr=False, compare=False)

    @classmethod
    def compute(cls, table: TableData, fragments: Sequence[ScanFragment],
                ndv: Mapping[str, int] | None = None) -> "WorkloadStats":
        """The statistics over the rows held; ``ndv``: the table's distinct counts, which
        replace the ones counted here (the rows held are a sample of the table)."""
        stats = []
        n = max(1, table.n_rows)
        selectivity: dict[tuple, float] = {}  # a repeated fragment's rows are counted once
        for f in fragments:
            boxes = tuple(table.encode_fragment(f))
            key = boxes_key(boxes)
            if key not in selectivity:
                selectivity[key] = 100.0 * float(row_matches(table.data, boxes).sum()) / n
            sel = selectivity[key]
            cols = frozenset(c for c in f.predicated_columns if c in table.data)
            stats.append(FragmentStat(f.query_id, cols, boxes, sel))
        freq: dict[str, int] = {}
        sums: dict[str, float] = {}
        for s in stats:
            for c in s.columns:
                freq[c] = freq.get(c, 0) + 1
                sums[c] = sums.get(c, 0.0) + s.selectivity
        avg = {c: sums[c] / freq[c] for c in freq}
        return cls(stats, freq, avg, {**distinct_counts(table), **(ndv or {})})

    def rank_key(self, column: str) -> tuple[int, float]:
        """The <major, minor> sort key of section 3.2.2: f(c), then 100 - avgSel(c)."""
        return self.freq.get(column, 0), 100.0 - self.avg_sel.get(column, 100.0)

    def ranked(self, columns: Iterable[str]) -> list[str]:
        """``columns`` in descending (f(c), 100 - avgSel(c)); name breaks ties (determinism)."""
        return sorted(columns, key=lambda c: (-self.rank_key(c)[0], -self.rank_key(c)[1], c))

    def union(self, columns: Iterable[str]) -> UnionStats:
        """#UnionQueries and the avg/min/max/median selectivity of fragments using any of
        ``columns`` (zeros when none does)."""
        cols = set(columns)
        by_columns, selectivity = self._positions_by_columns()
        hit = [pos for used, pos in by_columns.items() if used & cols]
        sel = selectivity[np.sort(np.concatenate(hit))] if hit else np.zeros(0)
        if not len(sel):
            return UnionStats(0, 0.0, 0.0, 0.0, 0.0)
        return UnionStats(len(sel), float(sel.mean()), float(sel.min()), float(sel.max()),
                          float(np.median(sel)))


    def _positions_by_columns(self) -> tuple[dict[frozenset, np.ndarray], np.ndarray]:
        """The fragments' positions per set of predicated columns, and every selectivity in
        fragment order (built once: :meth:`union` is asked for many column sets)."""
        if self._by_columns is None:
            groups: dict[frozenset, list[int]] = {}
            for i, s in enumerate(self.fragments):
                groups.setdefault(s.columns, []).append(i)
            self._by_columns = ({c: np.asarray(v, dtype=np.int64) for c, v in groups.items()},
                                np.array([s.selectivity for s in self.fragments], dtype=np.float64))
        return self._by_columns


def distinct_counts(table: TableData) -> dict[str, int]:
    """NDV of every column held: distinct non-NULL values of the rows held, exact."""
    return {c: goodturing.column_factor(table.data, c, table.cache)[0] - int(np.isnan(v).any())
            for c, v in table.data.items()}
