"""Storage tuner (PAW §V-B): redundant partitions RP_j = the result of q*_j, picked greedily.

|RP_j| = max(|q*_j ∩ D|, b_min) (reference code). Gain(RP_j) = Σ_{q*_i ⊆ RP_j}
max(0, cost_i − |RP_j|) / |RP_j| (eq. 5) with each q*_i's *current* cost; the greedy loop
picks the largest gain that fits the remaining budget, then updates the costs (decided:
greedy as the paper says, not the reference code's knapsack). At query time a query inside
some RP reads the smallest such RP, else the layout. Evaluation is logical only.

Example (hand-checked):
>>> x = np.arange(1000.0)[:, None]
>>> qs = [DBox.closed([150], [250]), DBox.closed([160], [240])]
>>> t = tune_storage(x, qs, np.array([200.0, 200.0]), b_min=50, budget_rows=182)
>>> [round(g, 3) for g in t.gains], t.chosen, t.mean_costs
([1.96, 1.469], [0, 1], [200.0, 101.0, 91.0])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from engine.design.paw.boxes import DBox


@dataclass(frozen=True)
class StorageTuning:
    """The chosen RPs (query indices, in pick order), their sizes and the mean cost per step."""

    boxes: tuple[DBox, ...]
    sizes: tuple[int, ...]
    gains: list[float]  # the initial gain of every candidate
    chosen: list[int]
    mean_costs: list[float]  # before any pick, then after each pick
    costs: np.ndarray  # final per-query cost
    picked_gains: tuple[float, ...] = ()  # the (updated) gain of each pick, in pick order

    def query_cost(self, q: DBox, layout_cost: float) -> float:
        """A query inside a chosen RP reads the smallest such RP; otherwise the layout."""
        inside = [self.sizes[j] for j in self.chosen if self.boxes[j].contains_box(q)]
        return float(min(inside)) if inside else float(layout_cost)


def _gain(j: int, sizes: np.ndarray, within: np.ndarray, costs: np.ndarray) -> float:
    return float(np.sum(np.maximum(0.0, costs[within[:, j]] - sizes[j])) / sizes[j])


def tune_storage(x: np.ndarray, extended: Sequence[DBox], costs: np.ndarray, b_min: int,
                 budget_rows: int) -> StorageTuning:
    """Greedy RP selection for the extended queries, whose current layout costs are ``costs``."""
    sizes = np.array([max(int(q.contains(x).sum()), int(b_min)) for q in extended], dtype=np.float64)
    within = np.array([[extended[j].contains_box(qi) for j in range(len(extended))] for qi in extended],
                      dtype=bool).reshape(len(extended), len(extended))  # [i, j]: q*_i ⊆ RP_j
    cur = np.asarray(costs, dtype=np.float64).copy()
    gains0 = [_gain(j, sizes, within, cur) for j in range(len(extended))]
    chosen: list[int] = []
    picked: list[float] = []
    means = [float(cur.mean()) if len(cur) else 0.0]
    left = float(budget_rows)
    while True:
        fits = [j for j in range(len(extended)) if j not in chosen and sizes[j] <= left]
        scored = [(_gain(j, sizes, within, cur), j) for j in fits]
        scored = [(g, j) for g, j in scored if g > 0]
        if not scored:
            break
        g, j = max(scored, key=lambda s: (s[0], -s[1]))
        chosen.append(j)
        picked.append(g)
        left -= sizes[j]
        cur[within[:, j]] = np.minimum(cur[within[:, j]], sizes[j])
        means.append(float(cur.mean()))
    return StorageTuning(tuple(extended), tuple(int(s) for s in sizes), gains0, chosen, means, cur,
                         tuple(picked))
