"""PAW's baselines on the same code paths (§VI): greedy Qd-tree, k-d tree, lower bounds.

The Qd-tree is :class:`engine.layout.qdtree.QdTree` fitted on the *history* (no δ, no
medians); the k-d tree is a :class:`PawTree` that splits nothing by the workload and is
refined by median cuts on round-robin dimensions. LBCost reads exactly the query's result;
LB_b = max(|q ∩ D|, b_min) when q meets D (section VI, "LB"). "q meets D" is read as: the
box meets the data's bounding box, since a layout whose descriptors cover the space (every
tree here) reads at least one partition of b_min rows for such a query even when no row
matches; with the literal reading (a non-empty result) most 4-D queries of Table III have
LB_b = 0, because their mean result is under one row.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from engine.design.paw.boxes import DBox
from engine.design.paw.tree import PawTree
from engine.layout.qdtree import QdTree


def kd_tree(data: Mapping[str, np.ndarray], b_min: int, columns: Sequence[str]) -> PawTree:
    """The k-d tree baseline: median cuts, round-robin dimensions, leaves in [b_min, 2·b_min)."""
    return PawTree(b_min=b_min, delta=0.0, psi="none", refine=True, columns=columns).fit(data, [])


def qdtree(data: Mapping[str, np.ndarray], history: Sequence[Mapping[str, Any]], b_min: int,
           columns: Sequence[str]) -> QdTree:
    """The greedy Qd-tree baseline on the history queries (query-bound cuts only)."""
    return QdTree(min_leaf_rows=b_min, columns=columns, max_leaves=10**9).fit(data, list(history))


def qdtree_cost(tree: QdTree, queries: Sequence[Mapping[str, Any]]) -> float:
    """Cost(𝐏, Q) (eq. 2) of a Qd-tree: rows of every leaf each query may touch."""
    rows = np.array([lf.rows for lf in tree.leaves_], dtype=np.float64)
    return float(sum(rows[tree.leaves_for(q)].sum() for q in queries))


def lower_bounds(x: np.ndarray, queries: Sequence[DBox], b_min: int) -> tuple[float, float]:
    """(LBCost, LB_b), summed over the queries: the literal result size and its b_min floor."""
    result = np.array([int(q.contains(x).sum()) for q in queries], dtype=np.float64)
    space = DBox.closed(x.min(axis=0), x.max(axis=0)) if len(x) else None
    meets = np.array([space is not None and q.intersects(space) for q in queries], dtype=bool)
    lb_b = np.where(meets, np.maximum(result, float(b_min)), 0.0)
    return float(result.sum()), float(lb_b.sum())
