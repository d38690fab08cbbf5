"""Alg. 2 of PAW: the best axis-parallel split of a partition, on the Qd-tree's machinery.

Candidates per dimension are the bounds of the extended queries inside the partition (the
greedy Qd-tree's cuts, :mod:`engine.layout.qdtree`) plus, PAW's addition, the partition's
median. The chosen cut minimises Cost(𝐏′, Q_F*(P)) = |Q(P)|·|P| − gain, i.e. maximises the
Qd-tree's gain (skipped query-row pairs); ties: larger gain, then larger smaller child.
Both children must hold ``b_min`` rows. The scoring is the Qd-tree's own ``_best_split``
(reused through a subclass, not copied), fed with per-node median cuts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from engine.design.paw.boxes import DBox
from engine.layout.qdtree import QdTree


@dataclass(frozen=True)
class AxisSplit:
    """``x[column] < value`` (op "lt") or ``<= value`` (op "le") goes left."""

    dim: int
    value: float
    op: str
    gain: float


class AxisSplitter(QdTree):
    """The greedy Qd-tree's vectorised split search over fixed rows and extended queries."""

    def __init__(self, columns: Sequence[str], data: Mapping[str, np.ndarray],
                 queries: Sequence[DBox]) -> None:
        super().__init__(min_leaf_rows=1, columns=columns)
        self._arrays = {c: np.asarray(data[c], dtype=np.float64) for c in columns}
        self._strings = {c: False for c in columns}
        self._boxes = [{c: tuple(b) for c, b in q.to_bounds(columns).items()} for q in queries]
        self._w = np.ones(len(queries))
        self._extra_cuts: list[tuple[str, float, str]] = []
        self._query_columns()

    def best(self, idx: np.ndarray, qidx: np.ndarray, b_min: int, medians: bool) -> AxisSplit | None:
        """The best admissible cut of the rows ``idx`` for the queries ``qidx`` (None if no gain)."""
        self._extra_cuts = []
        if medians and len(idx):
            for c in self.columns:
                values = np.sort(self._arrays[c][idx])
                self._extra_cuts.append((c, float(values[len(values) // 2]), "lt"))
        s = self._best_split(idx, qidx, int(b_min))
        if s is None:
            return None
        return AxisSplit(self.columns.index(s.column), float(s.value), s.op, float(s.gain))
