"""Greedy Qd-tree (Yang et al., SIGMOD 2020, as described in PAW section IV-C).

A Qd-tree cuts the data space with axis-parallel cuts taken from the workload's predicates:
every bound of every query box on every column is a candidate (``x < v`` / ``x <= v``).
At each node the greedy builder picks the cut that maximizes the number of (query, row)
pairs skipped, i.e. ``sum over queries touching the node of the rows in the child the query
does not touch``, subject to both children keeping at least ``min_leaf_rows`` rows (PAW's
``b_min``). It stops at a node when no admissible cut skips anything. Nodes are expanded
best gain first, so ``max_leaves`` keeps the most valuable cuts (without the cap the tree
equals the recursive greedy one: each node's choice depends only on its own rows and queries).

``min_leaf_rows`` counts rows of the *fit data*. Fit on a sample of a group and the caller
scales: ``min_leaf_rows = target_rows_per_file * sample_rows / group_rows``.

Query boxes are ``{column: (lo, hi, lo_inc, hi_inc)}`` in ENCODED values
(:mod:`engine.core.logical_types`); ``None`` (or NaN) is an open end, ``(lo, hi)`` means inclusive. A
query with an OR is several boxes. Rows route ``x < v`` (or ``x <= v``) left, everything
else right, so NaN rows go right. Leaves are numbered in depth-first order (left first), so
each leaf is one contiguous key range.

Example:
>>> import numpy as np
>>> x = np.arange(100.0)
>>> t = QdTree(min_leaf_rows=10).fit({"x": x}, queries=[{"x": (None, 29.0, True, True)}])
>>> [(leaf.rows, leaf.box["x"]) for leaf in t.leaves_]
[(30, (None, 29.0, True, True)), (70, (29.0, None, False, True))]
"""

from __future__ import annotations

import heapq
import itertools
import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from engine.core import logical_types
from engine.core.errors import ColumnNotFoundError, InvalidParameterError
from engine.layout.base import Ordering, RankCodec, column_arrays

Bound = tuple[Any, Any, bool, bool]  # lo, hi, lo_inclusive, hi_inclusive; None = open
Box = Mapping[str, Bound]
_OPS = ("lt", "le")


@dataclass(frozen=True)
class QdLeaf:
    """One leaf: its id (DFS order), tree node, rows of the fit data, and its region.

    ``box`` holds the bounds the cuts on the path impose, per cut column.
    """

    id: int
    node: int
    rows: int
    box: Mapping[str, Bound] = field(default_factory=dict)


def _is_open(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _normalize_box(box: Mapping[str, Any]) -> dict[str, Bound]:
    out: dict[str, Bound] = {}
    for col, b in box.items():
        if hasattr(b, "min_inclusive"):  # engine.workload.model.Range with encoded values
            b = (b.min, b.max, b.min_inclusive, b.max_inclusive)
        b = tuple(b)
        if len(b) == 2:
            b = (b[0], b[1], True, True)
        if len(b) != 4:
            raise InvalidParameterError(f"query bound on {col!r} must be (lo, hi[, lo_inc, hi_inc]), got {b!r}")
        lo, hi = (None if _is_open(b[0]) else b[0]), (None if _is_open(b[1]) else b[1])
        out[col] = (lo, hi, bool(b[2]), bool(b[3]))
    return out


def _typed(col: Any, value: Any, is_string: bool) -> Any:
    if is_string:
        if not isinstance(value, str):
            raise InvalidParameterError(f"column {col!r} holds strings; bound {value!r} is not a string")
        return value
    if isinstance(value, str):
        raise InvalidParameterError(f"column {col!r} holds numbers; bound {value!r} is a string")
    return float(value)


def _empty(b: Bound) -> bool:
    lo, hi, lo_inc, hi_inc = b
    if lo is None or hi is None:
        return False
    return lo > hi or (lo == hi and not (lo_inc and hi_inc))


def intervals_intersect(a: Bound, b: Bound) -> bool:
    """Whether two intervals share a point (continuous domain; None = open end)."""
    lo, lo_inc = a[0], a[2]
    if b[0] is not None and (lo is None or b[0] > lo or (b[0] == lo and not b[2])):
        lo, lo_inc = b[0], b[2]
    hi, hi_inc = a[1], a[3]
    if b[1] is not None and (hi is None or b[1] < hi or (b[1] == hi and not b[3])):
        hi, hi_inc = b[1], b[3]
    return not _empty((lo, hi, lo_inc, hi_inc))


class _Weighted:
    """A sorted array of bound values with prefix sums of their query weights."""

    def __init__(self, values: np.ndarray, weights: np.ndarray) -> None:
        order = np.argsort(values, kind="stable")
        self.v = values[order]
        self.cum = np.concatenate([[0.0], np.cumsum(weights[order])])

    def below(self, x: np.ndarray, inclusive: bool) -> np.ndarray:
        """Total weight of values < x (<= x when inclusive)."""
        return self.cum[np.searchsorted(self.v, x, side="right" if inclusive else "left")]

    def above(self, x: np.ndarray, inclusive: bool) -> np.ndarray:
        """Total weight of values > x (>= x when inclusive)."""
        return self.cum[-1] - self.below(x, not inclusive)


@dataclass
class _Split:
    gain: float
    balance: int
    column: str
    value: Any
    op: str
    n_left: int


class QdTree(Ordering):
    """Greedy Qd-tree ordering: rows ordered by leaf (DFS), then by the first column.

    ``cuts`` adds candidate cuts ``(column, value)`` (meaning ``x < value``) or
    ``(column, value, "le")`` to those taken from the queries. ``queries``/``weights`` may
    be given here instead of to :meth:`fit` (so a plan's ``layout_params`` can carry them);
    without any queries, each cut stands for the two half-space queries on its sides.
    ``columns`` limits the cut columns; empty means every column the queries/cuts name.
    """

    kind = "qdtree"

    def __init__(self, min_leaf_rows: int, cuts: Sequence[Sequence[Any]] | None = None,
                 max_leaves: int = 4096, columns: Sequence[str] = (),
                 queries: Sequence[Box] | None = None, weights: Sequence[float] | None = None) -> None:
        self.min_leaf_rows = min_leaf_rows
        self.cuts = cuts
        self.max_leaves = max_leaves
        self.columns = tuple(columns)
        self.queries = queries
        self.weights = weights

    # ----------------------------------------------------------------------- fit
    def fit(self, data: Mapping[str, np.ndarray], queries: Sequence[Box] | None = None,
            weights: Sequence[float] | None = None) -> "QdTree":
        if int(self.min_leaf_rows) < 1:
            raise InvalidParameterError(f"min_leaf_rows must be >= 1, got {self.min_leaf_rows}")
        if int(self.max_leaves) < 1:
            raise InvalidParameterError(f"max_leaves must be >= 1, got {self.max_leaves}")
        if queries is None:
            queries, weights = self.queries, (self.weights if weights is None else weights)
        boxes = [_normalize_box(q) for q in (queries or ())]
        cuts = [self._normalize_cut(c) for c in (self.cuts or ())]
        if not self.columns:
            seen: dict[str, None] = {}
            for col in itertools.chain((c for b in boxes for c in b), (c[0] for c in cuts)):
                seen.setdefault(col, None)
            self.columns = tuple(seen)
        for col in self.columns:
            if col not in data:
                raise ColumnNotFoundError(f"Qd-tree column {col!r} is not in the fit data")
        arrays = dict(zip(self.columns, column_arrays(data, self.columns)))
        n = len(next(iter(arrays.values()))) if arrays else 0
        strings = {c: a.dtype.kind == "U" for c, a in arrays.items()}
        w = np.ones(len(boxes)) if weights is None else np.asarray(weights, dtype=np.float64)
        if len(w) != len(boxes):
            raise InvalidParameterError(f"{len(w)} weights for {len(boxes)} queries")
        cuts = [(c, _typed(c, v, strings[c]), op) for c, v, op in cuts if c in arrays]
        if not boxes:  # each cut stands for the half-space queries on its two sides
            for c, v, op in cuts:
                boxes += [{c: (None, v, True, op == "le")}, {c: (v, None, op == "lt", True)}]
            w = np.ones(len(boxes))
        kept = [(i, {c: (None if b[0] is None else _typed(c, b[0], strings[c]),
                         None if b[1] is None else _typed(c, b[1], strings[c]), b[2], b[3])
                     for c, b in box.items() if c in arrays})
                for i, box in enumerate(boxes)]
        kept = [(i, b) for i, b in kept if b and not any(_empty(x) for x in b.values())]
        self._boxes = [b for _, b in kept]
        self._w = w[[i for i, _ in kept]] if kept else np.zeros(0)
        self._arrays, self._strings, self._extra_cuts = arrays, strings, cuts
        self._query_columns()
        self._build(n)
        first = self.columns[0] if self.columns else None
        self.first_codec_ = RankCodec.fit(arrays[first], 2 ** 16 - 1) if first else None
        del self._boxes, self._w, self._arrays, self._extra_cuts, self._q
        self.fitted_ = True
        return self

    @staticmethod
    def _normalize_cut(c: Sequence[Any]) -> tuple[str, Any, str]:
        c = tuple(c)
        if len(c) == 2:
            c = (c[0], c[1], "lt")
        if len(c) != 3 or c[2] not in _OPS:
            raise InvalidParameterError(f"a cut is (column, value[, 'lt'|'le']), got {c!r}")
        return str(c[0]), c[1], str(c[2])

    def _build(self, n: int) -> None:
        m = int(self.min_leaf_rows)
        nodes: list[dict[str, Any]] = [{"rows": n, "box": {}}]
        pending: dict[int, tuple[np.ndarray, np.ndarray]] = {0: (np.arange(n), np.arange(len(self._boxes)))}
        heap: list[tuple[float, int, int, _Split]] = []
        counter = itertools.count()

        def consider(node_id: int) -> None:
            idx, qidx = pending[node_id]
            split = self._best_split(idx, qidx, m)
            if split is not None:
                heapq.heappush(heap, (-split.gain, next(counter), node_id, split))

        consider(0)
        leaves = 1
        while heap and leaves < int(self.max_leaves):
            _, _, node_id, s = heapq.heappop(heap)
            idx, qidx = pending.pop(node_id)
            col = self._arrays[s.column][idx]
            go_left = col < s.value if s.op == "lt" else col <= s.value
            node = nodes[node_id]
            node.update(column=s.column, value=s.value, op=s.op, gain=float(s.gain))
            for side, sel in (("left", go_left), ("right", ~go_left)):
                box = dict(node["box"])
                lo, hi, lo_inc, hi_inc = box.get(s.column, (None, None, True, True))
                if side == "left":
                    hi, hi_inc = s.value, s.op == "le"
                else:
                    lo, lo_inc = s.value, s.op == "lt"
                box[s.column] = (lo, hi, lo_inc, hi_inc)
                child_q = self._touching(qidx, s.column, (lo, hi, lo_inc, hi_inc))
                child_id = len(nodes)
                node[side] = child_id
                nodes.append({"rows": int(sel.sum()), "box": box})
                pending[child_id] = (idx[sel], child_q)
                consider(child_id)
            leaves += 1
        self._finish(nodes)

    def _query_columns(self) -> None:
        """Per column, the bounds of every box as arrays (placeholders where a bound is open)."""
        self._q: dict[str, tuple[np.ndarray, ...]] = {}
        for col in self.columns:
            dt, fill = (np.str_, "") if self._strings[col] else (np.float64, 0.0)
            bs = [b.get(col) for b in self._boxes]
            lo_has = np.array([b is not None and b[0] is not None for b in bs], dtype=bool)
            hi_has = np.array([b is not None and b[1] is not None for b in bs], dtype=bool)
            lo = np.array([b[0] if h else fill for b, h in zip(bs, lo_has)], dtype=dt)
            hi = np.array([b[1] if h else fill for b, h in zip(bs, hi_has)], dtype=dt)
            lo_inc = np.array([b is None or b[2] for b in bs], dtype=bool)
            hi_inc = np.array([b is None or b[3] for b in bs], dtype=bool)
            self._q[col] = (lo, lo_has, lo_inc, hi, hi_has, hi_inc)

    def _touching(self, qidx: np.ndarray, col: str, region: Bound) -> np.ndarray:
        """The boxes of ``qidx`` whose interval on ``col`` meets ``region`` (both non-empty)."""
        lo, lo_has, lo_inc, hi, hi_has, hi_inc = (a[qidx] for a in self._q[col])
        rlo, rhi, rlo_inc, rhi_inc = region
        keep = np.ones(len(qidx), dtype=bool)
        if rlo is not None:  # the box lies entirely below the region
            keep &= ~(hi_has & ((hi < rlo) | ((hi == rlo) & ~(hi_inc & rlo_inc))))
        if rhi is not None:  # the box lies entirely above the region
            keep &= ~(lo_has & ((lo > rhi) | ((lo == rhi) & ~(lo_inc & rhi_inc))))
        return qidx[keep]

    def _best_split(self, idx: np.ndarray, qidx: np.ndarray, m: int) -> _Split | None:
        n = len(idx)
        if n < 2 * m or len(qidx) == 0:
            return None
        best: _Split | None = None
        w = self._w[qidx]
        for col in self.columns:
            lo, lo_has, lo_inc, hi, hi_has, hi_inc = (a[qidx] for a in self._q[col])
            extra = [(v, op) for c, v, op in self._extra_cuts if c == col]
            if not (lo_has.any() or hi_has.any() or extra):
                continue
            li, le = lo_has & lo_inc, lo_has & ~lo_inc
            hi_i, hi_e = hi_has & hi_inc, hi_has & ~hi_inc
            LI, LE = _Weighted(lo[li], w[li]), _Weighted(lo[le], w[le])
            HI, HE = _Weighted(hi[hi_i], w[hi_i]), _Weighted(hi[hi_e], w[hi_e])
            values = np.sort(self._arrays[col][idx])
            dt = values.dtype
            cands = {"lt": [lo[li], hi[hi_e], np.asarray([v for v, op in extra if op == "lt"], dtype=dt)],
                     "le": [lo[le], hi[hi_i], np.asarray([v for v, op in extra if op == "le"], dtype=dt)]}
            for op, parts in cands.items():
                v = np.unique(np.concatenate(parts))
                if not len(v):
                    continue
                if op == "lt":
                    n_left = np.searchsorted(values, v, side="left")
                    not_left = LI.above(v, True) + LE.above(v, True)  # lo >= v
                    not_right = HI.below(v, False) + HE.below(v, True)  # hi < v, or hi == v exclusive
                else:
                    n_left = np.searchsorted(values, v, side="right")
                    not_left = LI.above(v, False) + LE.above(v, True)  # lo > v, or lo == v exclusive
                    not_right = HI.below(v, True) + HE.below(v, True)  # hi <= v
                n_right = n - n_left
                gain = n_left * not_left + n_right * not_right
                ok = (n_left >= m) & (n_right >= m) & (gain > 0)
                if not ok.any():
                    continue
                balance = np.minimum(n_left, n_right)
                cand = np.flatnonzero(ok)
                top = cand[np.lexsort((-balance[cand], -gain[cand]))[0]]
                s = _Split(float(gain[top]), int(balance[top]), col, v[top].item(), op, int(n_left[top]))
                if best is None or (s.gain, s.balance) > (best.gain, best.balance):
                    best = s
        return best

    def _finish(self, nodes: list[dict[str, Any]]) -> None:
        """Renumber leaves depth-first (left first) and expose tree_ / leaves_."""
        leaves: list[QdLeaf] = []
        stack = [0]
        while stack:
            i = stack.pop()
            node = nodes[i]
            if "column" in node:
                stack += [node["right"], node["left"]]
            else:
                node["leaf"] = len(leaves)
                leaves.append(QdLeaf(len(leaves), i, int(node["rows"]), dict(node["box"])))
        self.tree_ = [{k: v for k, v in node.items() if k != "box"} for node in nodes]
        self.leaves_ = leaves

    # ------------------------------------------------------------------- routing
    @property
    def n_leaves_(self) -> int:
        return len(self.leaves_)

    def leaf_of(self, data: Mapping[str, np.ndarray]) -> np.ndarray:
        """The leaf id (DFS order) of every row, int64."""
        self._check_fitted()
        used = [c for c in self.columns if any(n.get("column") == c for n in self.tree_)]
        arrays = dict(zip(used, column_arrays(data, used)))
        n = len(next(iter(arrays.values()))) if arrays else _length(data)
        out = np.empty(n, dtype=np.int64)
        stack: list[tuple[int, np.ndarray]] = [(0, np.arange(n))]
        while stack:
            i, idx = stack.pop()
            node = self.tree_[i]
            if "leaf" in node:
                out[idx] = node["leaf"]
                continue
            col = arrays[node["column"]][idx]
            value = _typed(node["column"], node["value"], col.dtype.kind == "U")
            left = col < value if node["op"] == "lt" else col <= value
            stack += [(node["left"], idx[left]), (node["right"], idx[~left])]
        return out

    def keys(self, data: Mapping[str, np.ndarray]) -> np.ndarray:
        """Leaf id in DFS order: rows of one leaf are contiguous."""
        return self.leaf_of(data)

    def fine_keys(self, data: Mapping[str, np.ndarray]) -> np.ndarray:
        """Leaf id, then the first column's fitted rank, packed in an int64 (leaf << 17 | rank).

        Batch-independent like :meth:`keys`; use it to range-partition a leaf larger than one
        output file so the files inside a leaf are cut along the first column.
        """
        leaf = self.leaf_of(data)
        if self.first_codec_ is None:
            return leaf
        rank = self.first_codec_.ranks(column_arrays(data, self.columns[:1])[0])
        return (leaf << np.int64(17)) | rank

    def order(self, data: Mapping[str, np.ndarray]) -> np.ndarray:
        """By leaf, then by the first column (exact, NaN last)."""
        leaf = self.leaf_of(data)
        if not self.columns:
            return np.argsort(leaf, kind="stable")
        return np.lexsort((column_arrays(data, self.columns[:1])[0], leaf))

    def leaves_for(self, box: Box) -> np.ndarray:
        """Ids of the leaves whose region a query box (encoded values) may touch."""
        self._check_fitted()
        b = _normalize_box(box)
        return np.asarray([leaf.id for leaf in self.leaves_
                           if all(intervals_intersect(b[c], r) for c, r in leaf.box.items() if c in b)],
                          dtype=np.int64)

    # ---------------------------------------------------------------------- json
    def _params(self) -> dict[str, Any]:
        return {"min_leaf_rows": self.min_leaf_rows,
                "cuts": None if self.cuts is None else [list(c) for c in self.cuts],
                "max_leaves": self.max_leaves,
                "queries": None if self.queries is None else [
                    {c: list(b) for c, b in _normalize_box(q).items()} for q in self.queries],
                "weights": None if self.weights is None else [float(x) for x in self.weights]}

    def _state(self) -> dict[str, Any]:
        return {"columns": list(self.columns), "tree": self.tree_,
                "leaves": [{"id": lf.id, "node": lf.node, "rows": lf.rows,
                            "box": {c: list(b) for c, b in lf.box.items()}} for lf in self.leaves_],
                "first_codec": None if self.first_codec_ is None else self.first_codec_.to_json()}

    def _load_state(self, state: Mapping[str, Any]) -> None:
        self.columns = tuple(state["columns"])
        self.tree_ = [dict(n) for n in state["tree"]]
        self.leaves_ = [QdLeaf(int(lf["id"]), int(lf["node"]), int(lf["rows"]),
                               {c: tuple(b) for c, b in lf["box"].items()}) for lf in state["leaves"]]
        fc = state.get("first_codec")
        self.first_codec_ = None if fc is None else RankCodec.from_json(fc)


def _length(data: Mapping[str, Any]) -> int:
    for v in data.values():
        return len(v)
    return 0


def scale_min_leaf_rows(min_leaf_rows: int, fit_rows: int, group_rows: int) -> int:
    """``min_leaf_rows`` of a group, in rows of the sample the tree is fitted on.

    A plan's ``min_leaf_rows`` counts rows of the whole group (a leaf should fill at least
    one file); fitted on ``fit_rows`` of ``group_rows`` rows, the tree needs it scaled by
    ``fit_rows / group_rows`` or a big group collapses into a single leaf.

    Example:
    >>> scale_min_leaf_rows(1_000_000, 100_000, 50_000_000), scale_min_leaf_rows(500, 4000, 4000)
    (2000, 500)
    """
    if fit_rows >= group_rows or group_rows <= 0:
        return int(min_leaf_rows)
    return max(1, int(round(int(min_leaf_rows) * fit_rows / group_rows)))


def encode_bounds(params: Mapping[str, Any], types: Mapping[str, str]) -> dict[str, Any]:
    """``params`` with the cut and query bounds in ENCODED values (:mod:`engine.core.logical_types`).

    Plans are JSON, so a hand-written or older plan may carry ISO dates/timestamps (or
    numbers as strings) for a numeric column, which :class:`QdTree` rejects; they are
    encoded like the data. Columns not in ``types`` and string columns are left as they are.
    Raises InvalidParameterError naming the column when a value cannot be encoded.
    """
    def enc(col: str, v: Any) -> Any:
        ltype = types.get(str(col))
        if not isinstance(v, str) or ltype is None or logical_types.is_string(ltype):
            return v
        try:
            return logical_types.encode_scalar(ltype, v)
        except (TypeError, ValueError) as exc:
            raise InvalidParameterError(
                f"Qd-tree bound {v!r} on column {col!r} is not a {ltype}: {exc}") from None

    out = dict(params)
    if out.get("cuts"):
        out["cuts"] = [[c[0], enc(c[0], c[1]), *list(c)[2:]] for c in (list(x) for x in out["cuts"])]
    if out.get("queries"):
        queries = []
        for q in out["queries"]:
            box = {}
            for col, b in _normalize_box(q).items():
                box[col] = [None if b[0] is None else enc(col, b[0]),
                            None if b[1] is None else enc(col, b[1]), b[2], b[3]]
            queries.append(box)
        out["queries"] = queries
    return out
