"""The PAW partition tree: construction (Alg. 3 with the split policy Ψ), router, refinement.

``PawTree(b_min, delta, alpha, psi).fit(data, queries)`` extends every history query by δ
(Lemma 1: the worst δ-similar workload is Q_F* = {q*}) and builds the tree top-down: at each
node it tries the split functions Ψ allows, keeps the cheapest non-empty result and recurses
if that beats leaving the node whole (|Q_F*(P)|·|P|). Irregular partitions (IPs) are leaves.

Ψ (readings of the paper's text and eq. 4): ``"text"`` (default) tries Alg. 1 and Alg. 2 when
2·b_min ≤ |P| ≤ α·b_min and Alg. 2 alone when larger; ``"printed"`` is eq. 4 as printed
(Alg. 1 and 2 when |P| ≥ α·b_min, Alg. 2 when |P| ≥ 2·b_min); ``"axis"`` is Alg. 2 alone
(with ``medians=False`` and δ = 0 it is the greedy Qd-tree); ``"none"`` splits nothing (with
``refine=True`` it is the k-d tree baseline). ``delta="auto"`` estimates δ′ from the two
halves of the history (§IV-E); ``delta="auto-nearest"`` uses the one-sided nearest distance
instead (a departure, :func:`engine.design.paw.similarity.nearest_delta`). ``refine``
splits rectangular leaves by a k-d tree (median, round-robin dimensions) until each holds
[b_min, 2·b_min) rows; IPs are not refined.

Routing (§IV-D): a row goes left at an axis node iff ``x < v`` (``<=`` for op "le"); at a
group node it goes to the first GP′ containing it, else to the IP. A query box reaches a
rectangular child iff it meets the child's box, and the IP iff (q ∩ P) ⊄ ∪GP′, tested
exactly by box subtraction. The root descriptor is unbounded, so rows outside the fitted
data's MBR still route to exactly one leaf and are found by every query that covers them.

Example (the greedy Qd-tree's cut, plus a median-free run):
>>> import numpy as np
>>> t = PawTree(b_min=10, delta=0.0, medians=False).fit({"x": np.arange(100.0)},
...                                                    [{"x": (None, 29.0)}])
>>> [leaf.rows for leaf in t.leaves_], t.cost([{"x": (None, 29.0)}])
([30, 70], 30.0)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from engine.core.errors import ColumnNotFoundError, InvalidParameterError
from engine.design.paw.axis_split import AxisSplit, AxisSplitter
from engine.design.paw.boxes import DBox, covered, stack, touching
from engine.design.paw.group_split import GroupSplit, multi_group_split
from engine.design.paw.similarity import DELTA_ESTIMATORS, estimate_delta, extend

PSI = ("text", "printed", "axis", "none")


@dataclass(frozen=True)
class PawLeaf:
    """A stored partition: its id (DFS order), node, rows of the fit data, irregular or not."""

    id: int
    node: int
    rows: int
    irregular: bool


@dataclass
class PawNode:
    """A node of the tree: its descriptor box, fit rows, kind and children (ids into ``nodes_``)."""

    box: DBox
    rows: int
    kind: str = "leaf"  # leaf | axis | group
    split: AxisSplit | None = None
    children: list[int] = field(default_factory=list)  # axis: [left, right]; group: GP′..., IP
    irregular: bool = False
    depth: int = 0
    leaf: int = -1


class PawTree:
    """PAW (Li, Yiu, Chan): a partitioning robust to δ-similar future workloads.

    Learned by :meth:`fit`: ``domain_`` (the data's min/max per dimension), ``delta_`` (δ
    used, δ′ when ``delta="auto"``), ``history_`` (Q_H as boxes, oldest first),
    ``extended_`` (Q_F*, Lemma 1), ``nodes_`` and ``leaves_``.
    """

    def __init__(self, b_min: int, delta: float | str = 0.01, alpha: float = 3.0, psi: str = "text",
                 medians: bool = True, refine: bool = False, columns: Sequence[str] = ()) -> None:
        self.b_min = b_min
        self.delta = delta
        self.alpha = alpha
        self.psi = psi
        self.medians = medians
        self.refine = refine
        self.columns = tuple(columns)

    # ------------------------------------------------------------------ fitting
    def _check(self) -> None:
        if int(self.b_min) < 1:
            raise InvalidParameterError(f"b_min must be >= 1, got {self.b_min}")
        if self.psi not in PSI:
            raise InvalidParameterError(f"psi must be one of {', '.join(PSI)}, got {self.psi!r}")
        if float(self.alpha) <= 1:
            raise InvalidParameterError(f"alpha must be > 1, got {self.alpha}")
        if self.delta not in DELTA_ESTIMATORS and (isinstance(self.delta, str)
                                                    or not 0 <= float(self.delta) <= 1):
            # δ is a fraction of each column's domain: above 1 every q* (Lemma 1) already
            # covers the whole domain, so a larger δ is a mistake (as policy.paw.parse_delta)
            raise InvalidParameterError(f"delta must be a fraction in [0, 1] or one of "
                                        f"{', '.join(DELTA_ESTIMATORS)}, got {self.delta!r}")

    def fit(self, data: Mapping[str, np.ndarray], queries: Sequence[Mapping[str, Any] | DBox]) -> "PawTree":
        """Build the tree on ``data`` (column -> numeric array) for the history ``queries``.

        ``queries`` are boxes ``{column: (lo, hi[, lo_inc, hi_inc])}`` in encoded values, in
        timestamp order (``delta="auto"`` splits them into an older and a newer half).
        """
        self._check()
        if not self.columns:
            seen: dict[str, None] = {}
            for q in queries:
                if isinstance(q, Mapping):
                    for c in q:
                        seen.setdefault(c, None)
            self.columns = tuple(seen) or tuple(data)
        for c in self.columns:
            if c not in data:
                raise ColumnNotFoundError(f"PAW dimension {c!r} is not in the data")
        x = np.column_stack([np.asarray(data[c], dtype=np.float64) for c in self.columns])
        self.domain_ = (x.min(axis=0), x.max(axis=0)) if len(x) else (np.zeros(x.shape[1]),) * 2
        self._domain_len = np.where(self.domain_[1] > self.domain_[0], self.domain_[1] - self.domain_[0], 1.0)
        history = [self.as_box(q) for q in queries]
        self.history_ = history
        auto = isinstance(self.delta, str) and self.delta in DELTA_ESTIMATORS
        self.delta_ = (estimate_delta(history, self.domain_, self.delta) if auto and len(history) >= 2
                       else 0.0 if auto else float(self.delta))
        self.extended_ = [extend(q, self.delta_, self.domain_) for q in history]
        self._build(x, data)
        return self

    def as_box(self, q: Mapping[str, Any] | DBox) -> DBox:
        """A query box over this tree's dimensions (a DBox is returned as is)."""
        return q if isinstance(q, DBox) else DBox.from_bounds(q, self.columns)

    def _allowed(self, n: int) -> tuple[bool, bool]:
        """Ψ(P): (try Alg. 1, try Alg. 2) for a partition of ``n`` rows."""
        b, a = int(self.b_min), float(self.alpha)
        if n < 2 * b or self.psi == "none":
            return False, False
        if self.psi == "axis":
            return False, True
        if self.psi == "printed":
            return n >= a * b, True
        return n <= a * b, True

    def _build(self, x: np.ndarray, data: Mapping[str, np.ndarray]) -> None:
        q_all = stack(self.extended_, x.shape[1])
        mbr = DBox.closed(self.domain_[0], self.domain_[1])
        splitter = AxisSplitter(self.columns, {c: x[:, j] for j, c in enumerate(self.columns)}, self.extended_)
        self.nodes_: list[PawNode] = [PawNode(DBox.everything(x.shape[1]), len(x))]
        todo = [(0, np.arange(len(x)), np.flatnonzero(touching(q_all, self.nodes_[0].box)))]
        refine: list[tuple[int, np.ndarray]] = []
        while todo:
            nid, idx, qidx = todo.pop()
            node = self.nodes_[nid]
            children = self._split(node, x, idx, qidx, splitter, mbr)
            if not children:
                if not node.irregular:
                    refine.append((nid, idx))
                continue
            for child, cidx in children:
                child.depth = node.depth + 1
                node.children.append(len(self.nodes_))
                self.nodes_.append(child)
                if not child.irregular:
                    cq = qidx[touching(tuple(a[qidx] for a in q_all), child.box)]
                    todo.append((node.children[-1], cidx, cq))
        if self.refine:
            for nid, idx in refine:
                self._kd(nid, x, idx)
        self._number_leaves()

    def _split(self, node: PawNode, x: np.ndarray, idx: np.ndarray, qidx: np.ndarray,
               splitter: AxisSplitter, mbr: DBox) -> list[tuple[PawNode, np.ndarray]]:
        """Alg. 3 at one node: the cheapest split Ψ allows if it beats |Q(P)|·|P|, else []."""
        try_group, try_axis = self._allowed(len(idx))
        if not len(qidx):
            return []
        base = float(len(qidx) * len(idx))
        best_cost, best = base, None
        if try_axis:
            s = splitter.best(idx, qidx, int(self.b_min), self.medians)
            if s is not None and base - s.gain < best_cost:
                best_cost, best = base - s.gain, s
        if try_group:
            g = multi_group_split(x[idx], node.box.intersect(mbr), [self.extended_[i] for i in qidx],
                                  int(self.b_min), self._domain_len, outer=node.box)
            if g is not None and g.cost < best_cost:
                best_cost, best = g.cost, g
        if isinstance(best, AxisSplit):
            return self._apply_axis(node, best, x, idx)
        if isinstance(best, GroupSplit):
            return self._apply_group(node, best, idx)
        return []

    def _apply_axis(self, node: PawNode, s: AxisSplit, x: np.ndarray, idx: np.ndarray) -> list[tuple[PawNode, np.ndarray]]:
        node.kind, node.split = "axis", s
        col = x[idx, s.dim]
        left = col < s.value if s.op == "lt" else col <= s.value
        lbox, rbox = _halves(node.box, s)
        return [(PawNode(lbox, int(left.sum())), idx[left]), (PawNode(rbox, int((~left).sum())), idx[~left])]

    def _apply_group(self, node: PawNode, g: GroupSplit, idx: np.ndarray) -> list[tuple[PawNode, np.ndarray]]:
        node.kind = "group"
        out = []
        for box, members in zip(g.descriptors, g.members):
            # a GP′ side on the data's MBR reaches the node's own bound (group_split.descriptor),
            # the boxes the split was priced with
            out.append((PawNode(box, int(members.sum())), idx[members]))
        out.append((PawNode(node.box, int(g.ip.sum()), irregular=True), idx[g.ip]))
        return out

    def _kd(self, nid: int, x: np.ndarray, idx: np.ndarray) -> None:
        """k-d refinement: median cuts, round-robin dimensions, until [b_min, 2·b_min) rows."""
        b, d = int(self.b_min), x.shape[1]
        todo = [(nid, idx)]
        while todo:
            nid, idx = todo.pop()
            node = self.nodes_[nid]
            if len(idx) < 2 * b:
                continue
            for k in range(d):
                dim = (node.depth + k) % d
                values = np.sort(x[idx, dim])
                v = float(values[len(values) // 2])
                n_left = int(np.searchsorted(values, v, side="left"))
                if n_left >= b and len(idx) - n_left >= b:
                    kids = self._apply_axis(node, AxisSplit(dim, v, "lt", 0.0), x, idx)
                    for child, cidx in kids:
                        child.depth = node.depth + 1
                        node.children.append(len(self.nodes_))
                        self.nodes_.append(child)
                        todo.append((node.children[-1], cidx))
                    break

    def _number_leaves(self) -> None:
        leaves: list[PawLeaf] = []
        order = [0]
        while order:
            nid = order.pop()
            node = self.nodes_[nid]
            if node.kind == "leaf":
                node.leaf = len(leaves)
                leaves.append(PawLeaf(len(leaves), nid, node.rows, node.irregular))
            else:
                order += node.children[::-1]
        self.leaves_ = leaves

    # ------------------------------------------------------------------ routing
    @property
    def n_leaves_(self) -> int:
        return len(self.leaves_)

    def leaf_of(self, data: Mapping[str, np.ndarray]) -> np.ndarray:
        """The leaf id of every row (batch-independent), int64."""
        x = np.column_stack([np.asarray(data[c], dtype=np.float64) for c in self.columns])
        out = np.full(len(x), -1, dtype=np.int64)
        todo = [(0, np.arange(len(x)))]
        while todo:
            nid, idx = todo.pop()
            node = self.nodes_[nid]
            if node.kind == "leaf":
                out[idx] = node.leaf
            elif node.kind == "axis":
                s = node.split
                col = x[idx, s.dim]
                left = col < s.value if s.op == "lt" else col <= s.value
                todo += [(node.children[0], idx[left]), (node.children[1], idx[~left])]
            else:
                rest = idx
                for child in node.children[:-1]:
                    inside = self.nodes_[child].box.contains(x[rest])
                    todo.append((child, rest[inside]))
                    rest = rest[~inside]
                todo.append((node.children[-1], rest))
        return out

    def leaves_for(self, box: Mapping[str, Any] | DBox) -> np.ndarray:
        """Ids of the leaves a query box reaches (descriptor test; the IP by box subtraction)."""
        q = self.as_box(box)
        hits: list[int] = []
        todo = [0] if q.intersects(self.nodes_[0].box) else []
        while todo:
            node = self.nodes_[todo.pop()]
            if node.kind == "leaf":
                hits.append(node.leaf)
                continue
            rect = node.children if node.kind == "axis" else node.children[:-1]
            todo += [c for c in rect if q.intersects(self.nodes_[c].box)]
            if node.kind == "group":
                part = q.intersect(node.box)
                if not covered(part, [self.nodes_[c].box for c in rect]):
                    todo.append(node.children[-1])
        return np.asarray(sorted(hits), dtype=np.int64)

    def query_cost(self, box: Mapping[str, Any] | DBox) -> float:
        """Cost(𝐏, q), eq. 1: rows of the fit data in the leaves the query reaches."""
        return float(sum(self.leaves_[i].rows for i in self.leaves_for(box)))

    def cost(self, queries: Sequence[Mapping[str, Any] | DBox]) -> float:
        """Cost(𝐏, Q), eq. 2 (sum over the queries, not the mean)."""
        return float(sum(self.query_cost(q) for q in queries))

    def leaf_boxes(self) -> list[dict[str, list[Any]]]:
        """Each leaf's descriptor box (for an IP: its parent's box, minus the GP′ siblings)."""
        return [self.nodes_[lf.node].box.to_bounds(self.columns) for lf in self.leaves_]

    def router_json(self) -> dict[str, Any]:
        """The routing tree as :class:`engine.layout.paw.PawOrdering` takes it (``tree``)."""
        nodes: list[dict[str, Any]] = []
        for node in self.nodes_:
            if node.kind == "leaf":
                nodes.append({"leaf": node.leaf, "rows": node.rows, "irregular": node.irregular})
            elif node.kind == "axis":
                nodes.append({"dim": node.split.dim, "value": node.split.value, "op": node.split.op,
                              "children": list(node.children)})
            else:
                nodes.append({"boxes": [self.nodes_[c].box.to_bounds(self.columns) for c in node.children[:-1]],
                              "children": list(node.children)})
        return {"columns": list(self.columns), "nodes": nodes}

    def summary(self) -> dict[str, Any]:
        """JSON-plain tree statistics."""
        rows = [lf.rows for lf in self.leaves_]
        return {"leaves": len(rows), "irregular_leaves": sum(lf.irregular for lf in self.leaves_),
                "irregular_rows": int(sum(lf.rows for lf in self.leaves_ if lf.irregular)),
                "min_leaf_rows": int(min(rows)) if rows else 0, "max_leaf_rows": int(max(rows)) if rows else 0,
                "delta": self.delta_, "b_min": int(self.b_min), "psi": self.psi, "alpha": float(self.alpha),
                "columns": list(self.columns)}


def _halves(box: DBox, s: AxisSplit) -> tuple[DBox, DBox]:
    """The boxes of the two children of an axis cut."""
    left = DBox(box.lo.copy(), box.hi.copy(), box.lo_inc.copy(), box.hi_inc.copy())
    right = DBox(box.lo.copy(), box.hi.copy(), box.lo_inc.copy(), box.hi_inc.copy())
    left.hi[s.dim], left.hi_inc[s.dim] = s.value, s.op == "le"
    right.lo[s.dim], right.lo_inc[s.dim] = s.value, s.op == "lt"
    return left, right
