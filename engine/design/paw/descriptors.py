"""Precise descriptors (PAW §V-A): N_mbr MBRs per partition from an STR packing.

A partition is scanned iff its descriptor meets the query *and* at least one of its MBRs
does; each MBR costs 16·d bytes at the master (two 8-byte bounds per dimension). The MBRs
come from a sort-tile-recursive packing that yields exactly ``n_mbr`` tiles (IPs get
them too). Physically, rows written in STR order with ``n_mbr`` row
groups make the row-group min/max the precise descriptor.

Example: two clusters in one partition, a query in the gap between them:
>>> x = np.array([[0.0, 0], [1, 1], [9, 9], [10, 10]])
>>> [b.lo.tolist() for b in str_mbrs(x, 2)]
[[0.0, 0.0], [9.0, 9.0]]
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np

from engine.core.errors import InvalidParameterError
from engine.design.paw.boxes import DBox
from engine.design.paw.tree import PawTree


def _shares(total: int, parts: int) -> list[int]:
    """``total`` split into ``parts`` near-equal integers (larger first)."""
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


def str_order(x: np.ndarray, n_tiles: int, dim: int = 0) -> list[np.ndarray]:
    """Row indices of exactly ``min(n_tiles, rows)`` STR tiles: slabs on ``dim``, recurse on the rest."""
    n, d = x.shape
    n_tiles = max(1, min(n_tiles, n))
    idx = np.argsort(x[:, dim], kind="stable")
    if n_tiles == 1:
        return [idx]
    if dim == d - 1:
        return [idx[s:s + k] for s, k in zip(np.cumsum([0] + _shares(n, n_tiles)[:-1]), _shares(n, n_tiles))]
    slabs = min(n_tiles, math.ceil(n_tiles ** (1 / (d - dim))))
    tiles_per = _shares(n_tiles, slabs)
    rows_per = [round(n * t / n_tiles) for t in tiles_per]
    rows_per[-1] = n - sum(rows_per[:-1])
    out: list[np.ndarray] = []
    start = 0
    for t, r in zip(tiles_per, rows_per):
        part = idx[start:start + r]
        start += r
        out += [part[sub] for sub in str_order(x[part], t, dim + 1)]
    return out


def str_mbrs(x: np.ndarray, n_mbr: int) -> list[DBox]:
    """Exactly ``n_mbr`` closed MBRs (fewer only if the partition has fewer rows) covering ``x``."""
    if n_mbr < 1:
        raise InvalidParameterError(f"n_mbr must be >= 1, got {n_mbr}")
    return [DBox.closed(x[t].min(axis=0), x[t].max(axis=0)) for t in str_order(x, n_mbr) if len(t)]


class PreciseDescriptors:
    """A fitted tree plus N_mbr MBRs per leaf, computed on ``data``'s rows.

    ``tree`` is a :class:`PawTree` or any tree with ``columns``, ``leaves_`` (with ``rows``),
    ``leaf_of(data)`` and ``leaves_for(bounds)`` (the Qd-tree baseline), so the plugin is
    measured on every method, as PAW's Figs. 23a and 25a do.
    """

    def __init__(self, tree: Any, data: Mapping[str, np.ndarray], n_mbr: int) -> None:
        self.tree, self.n_mbr = tree, n_mbr
        self.columns = tuple(tree.columns)
        x = np.column_stack([np.asarray(data[c], dtype=np.float64) for c in self.columns])
        leaf = tree.leaf_of(data)
        self.rows = np.array([lf.rows for lf in tree.leaves_], dtype=np.float64)
        order = np.argsort(leaf, kind="stable")  # each leaf's rows, in their original order
        cut = np.searchsorted(leaf[order], np.arange(len(tree.leaves_) + 1))
        self.mbrs = [str_mbrs(x[order[cut[i]:cut[i + 1]]], n_mbr) if cut[i + 1] > cut[i] else []
                     for i in range(len(tree.leaves_))]

    @property
    def bytes(self) -> int:
        """Master-node space: 16·d bytes per MBR."""
        return 16 * len(self.columns) * sum(len(m) for m in self.mbrs)

    def _tree_hits(self, q: DBox) -> np.ndarray:
        if isinstance(self.tree, PawTree):
            return self.tree.leaves_for(q)
        return np.asarray(self.tree.leaves_for(q.to_bounds(self.columns)), dtype=np.int64)

    def leaves_for(self, box: Mapping[str, Any] | DBox) -> np.ndarray:
        """Leaves whose tree descriptor *and* one of whose MBRs meet the query (§V-A)."""
        q = box if isinstance(box, DBox) else DBox.from_bounds(box, self.columns)
        return np.asarray([i for i in self._tree_hits(q) if any(m.intersects(q) for m in self.mbrs[i])],
                          dtype=np.int64)

    def query_cost(self, box: Mapping[str, Any] | DBox) -> float:
        """Cost(𝐏, q) (eq. 1) with the precise test."""
        return float(self.rows[self.leaves_for(box)].sum())

    def cost(self, queries: Sequence[Mapping[str, Any] | DBox]) -> float:
        """Cost(𝐏, Q) (eq. 2) with the precise test."""
        return float(sum(self.query_cost(q) for q in queries))

    def to_json(self) -> list[list[dict[str, list[Any]]]]:
        """Per leaf, its MBRs as box bounds (what the executor's STR row groups should bound)."""
        return [[m.to_bounds(self.columns) for m in boxes] for boxes in self.mbrs]


def row_group_cost(lo: np.ndarray, hi: np.ndarray, rows: np.ndarray, file_of: np.ndarray,
                   q: DBox) -> tuple[int, float]:
    """The physical, descriptor-aware check: row groups with min/max ``lo``/``hi``
    (one row per row group, the tree's columns), ``rows`` each, in files ``file_of``. A file
    is touched iff the query meets one of its row groups' boxes (its MBRs); the rows read are
    those of the row groups met. Returns (files touched, rows read).

    >>> lo = np.array([[0.0, 0], [9, 9], [20, 20]]); hi = np.array([[1.0, 1], [10, 10], [30, 30]])
    >>> row_group_cost(lo, hi, np.array([5, 5, 7]), np.array([0, 0, 1]), DBox.closed([4, 4], [6, 6]))
    (0, 0.0)
    >>> row_group_cost(lo, hi, np.array([5, 5, 7]), np.array([0, 0, 1]), DBox.closed([0, 0], [25, 25]))
    (2, 17.0)
    """
    meets = np.all((lo <= q.hi) & (hi >= q.lo), axis=1)
    return int(len(np.unique(file_of[meets]))), float(rows[meets].sum())
