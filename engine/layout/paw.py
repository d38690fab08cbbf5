"""PAW's partition tree as an :class:`Ordering`, so plans can write a PAW design.

The tree is designed above this layer (:mod:`engine.design.paw`, on a sample of the table
and the workload) and travels in the plan as JSON (``tree``): axis nodes
``{"dim", "value", "op", "children": [left, right]}``, group nodes ``{"boxes": [GP′ box
bounds...], "children": [GP′..., IP]}`` and leaves ``{"leaf": id}``. This class only routes
(PAW §IV-D, batch-independent as Spark needs): ``x < v`` (``<=`` for op "le") goes left;
at a group node a row goes to the first GP′ box containing it, else to the IP. Every row
reaches exactly one leaf, NaN (null) rows included (comparisons are false: right / IP).

Keys are leaf ids, so no leaf is ever split between two output ranges; :meth:`fine_keys`
adds the first column's rank (``leaf << 17 | rank``) like the Qd-tree's, for an executor
that cuts a leaf larger than one file along it.

Example (x < 5 left; on the right, the box [7, 8] is a group, the rest the IP):
>>> import numpy as np
>>> tree = {"nodes": [{"dim": 0, "value": 5.0, "op": "lt", "children": [1, 2]}, {"leaf": 0},
...                   {"boxes": [{"x": [7.0, 8.0, True, True]}], "children": [3, 4]},
...                   {"leaf": 1}, {"leaf": 2}]}
>>> PawOrdering(["x"], tree=tree).fit({"x": np.arange(10.0)}).keys({"x": np.arange(10.0)}).tolist()
[0, 0, 0, 0, 0, 2, 2, 1, 1, 2]
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from engine.core.errors import InvalidParameterError
from engine.layout.base import Ordering, RankCodec, column_arrays

FINE_SHIFT = 17  # as QdTree.fine_keys: leaf << 17 | rank of the first column


def _box_mask(box: Mapping[str, Sequence[Any]], columns: Sequence[str], x: np.ndarray) -> np.ndarray:
    """Rows of ``x`` inside a box ``{column: [lo, hi, lo_inc, hi_inc]}`` (None = open)."""
    inside = np.ones(len(x), dtype=bool)
    for j, col in enumerate(columns):
        if col not in box:
            continue
        lo, hi, lo_inc, hi_inc = box[col]
        v = x[:, j]
        if lo is not None:
            inside &= (v >= lo) if lo_inc else (v > lo)
        if hi is not None:
            inside &= (v <= hi) if hi_inc else (v < hi)
    return inside


class PawOrdering(Ordering):
    """Rows ordered by PAW leaf (depth-first ids), then by the first column.

    ``tree``: the router JSON (see the module docstring); ``design``: notes for humans (δ,
    b_min, α, Ψ, predicted costs), carried but not used for routing; ``n_mbr``: the precise
    descriptor plugin (PAW §V-A), not used for routing either: > 0 asks the executor to write
    each file's rows in STR order as ``n_mbr`` row groups (:mod:`engine.spark.str_rowgroups`).
    """

    kind = "paw"

    def __init__(self, columns: Sequence[str], tree: Mapping[str, Any] | None = None,
                 design: Mapping[str, Any] | None = None, n_mbr: int = 0) -> None:
        self.columns = tuple(columns)
        self.tree = tree
        self.design = design
        self.n_mbr = n_mbr

    def fit(self, data: Mapping[str, np.ndarray]) -> "PawOrdering":
        """Check the tree; learn the first column's rank codec (for :meth:`fine_keys`)."""
        nodes = list((self.tree or {}).get("nodes") or [])
        if not nodes:
            raise InvalidParameterError("a paw layout needs its partition tree (layout_params 'tree'); "
                                        "design it with `layout-advisor design paw` or the paw policy")
        leaves = sorted(int(n["leaf"]) for n in nodes if "leaf" in n)
        if leaves != list(range(len(leaves))):
            raise InvalidParameterError("paw tree: leaf ids must be 0..n-1, each once")
        self.n_leaves_ = len(leaves)
        if not isinstance(self.n_mbr, int) or isinstance(self.n_mbr, bool) or self.n_mbr < 0:
            raise InvalidParameterError(f"paw n_mbr must be an integer >= 0 (0: no precise descriptors), "
                                        f"got {self.n_mbr!r}")
        first = column_arrays(data, self.columns[:1])[0] if self.columns else None
        self.first_codec_ = RankCodec.fit(first, 2 ** 16 - 1) if first is not None else None
        self.fitted_ = True
        return self

    def leaf_of(self, data: Mapping[str, np.ndarray]) -> np.ndarray:
        """The leaf id of every row, int64 (each row exactly one leaf)."""
        self._check_fitted()
        arrays = column_arrays(data, self.columns)
        n = len(arrays[0]) if arrays else 0
        x = np.column_stack(arrays) if arrays else np.zeros((n, 0))
        nodes = self.tree["nodes"]
        out = np.full(n, -1, dtype=np.int64)
        todo = [(0, np.arange(n))]
        while todo:
            nid, idx = todo.pop()
            node = nodes[nid]
            if "leaf" in node:
                out[idx] = int(node["leaf"])
            elif "dim" in node:
                col = x[idx, int(node["dim"])]
                left = col < node["value"] if node["op"] == "lt" else col <= node["value"]
                todo += [(node["children"][0], idx[left]), (node["children"][1], idx[~left])]
            else:
                rest = idx
                for box, child in zip(node["boxes"], node["children"][:-1]):
                    inside = _box_mask(box, self.columns, x[rest])
                    todo.append((child, rest[inside]))
                    rest = rest[~inside]
                todo.append((node["children"][-1], rest))
        return out

    def keys(self, data: Mapping[str, np.ndarray]) -> np.ndarray:
        """Leaf id: the rows of one leaf are contiguous and never split by a key range."""
        return self.leaf_of(data)

    def fine_keys(self, data: Mapping[str, np.ndarray]) -> np.ndarray:
        """``leaf << 17 | rank`` of the first column: cuts a big leaf along it (as QdTree)."""
        leaf = self.leaf_of(data)
        if self.first_codec_ is None:
            return leaf
        rank = self.first_codec_.ranks(column_arrays(data, self.columns[:1])[0])
        return (leaf << np.int64(FINE_SHIFT)) | rank

    def order(self, data: Mapping[str, np.ndarray]) -> np.ndarray:
        """By leaf, then by the first column."""
        leaf = self.leaf_of(data)
        return np.lexsort((column_arrays(data, self.columns[:1])[0], leaf))

    def _params(self) -> dict[str, Any]:
        return {"tree": self.tree, "design": self.design, "n_mbr": self.n_mbr}

    def _state(self) -> dict[str, Any]:
        return {"n_leaves": self.n_leaves_,
                "first_codec": None if self.first_codec_ is None else self.first_codec_.to_json()}

    def _load_state(self, state: Mapping[str, Any]) -> None:
        self.n_leaves_ = int(state["n_leaves"])
        fc = state.get("first_codec")
        self.first_codec_ = None if fc is None else RankCodec.from_json(fc)
