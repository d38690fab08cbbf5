"""A PAW design for a table: columns, b_min, the tree, and its predicted cost beside the
baselines (Qd-tree, k-d tree, LB_b and the literal LBCost), on a sample of the table.

Costs are Cost(𝐏, Q)/|Q| (eq. 2, mean rows read per query) scaled from the sample to the
table, on the history Q_H and on the worst δ-similar future Q_F* (Lemma 1). ``b_min_rows``
counts rows of the table (default: one file's rows) and is scaled to the sample as the
Qd-tree's ``min_leaf_rows`` is (:func:`engine.layout.qdtree.scale_min_leaf_rows`).

``n_mbr`` > 0 turns on the precise descriptor plugin (§V-A): every leaf gets ``n_mbr`` STR
MBRs on the sample, the cost ``paw_precise`` counts a leaf only when a query meets one of
them, and the executor writes each file's rows in STR order as ``n_mbr`` row
groups, whose min/max are then the descriptors (:mod:`engine.spark.str_rowgroups`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np

from engine.core import logical_types
from engine.core.errors import InvalidParameterError
from engine.design.paw.baselines import kd_tree, lower_bounds, qdtree, qdtree_cost
from engine.design.paw.descriptors import PreciseDescriptors
from engine.design.paw.sample import read_sample
from engine.design.paw.tree import PawTree
from engine.layout.qdtree import scale_min_leaf_rows
from engine.workload.model import ScanFragment

if TYPE_CHECKING:
    from engine.table.model import ZoneMaps

#: ``sampler(zonemaps, columns, max_rows, seed) -> {column: encoded array}``, the shape of
#: ``engine.policy.base.RowSampler`` (policy sits above design, so it is restated here)
Sampler = Callable[["ZoneMaps", Sequence[str], int, int], Mapping[str, Any]]


def choose_columns(fragments: Sequence[ScanFragment], types: Mapping[str, str], max_columns: int = 4) -> list[str]:
    """The most predicated non-string columns of the window (PAW's query dimensions, Table III)."""
    uses: Counter[str] = Counter()
    for f in fragments:
        for c in f.predicated_columns:
            if c in types and not logical_types.is_string(types[c]):
                uses[c] += 1
    return [c for c, _ in uses.most_common()][: int(max_columns)]


def history_boxes(fragments: Sequence[ScanFragment], types: Mapping[str, str],
                  columns: Sequence[str]) -> list[dict[str, tuple]]:
    """Every box of every fragment on ``columns``, encoded, oldest first (an OR is several boxes)."""
    ordered = sorted(range(len(fragments)), key=lambda i: (fragments[i].ts or "", i))
    out = []
    for i in ordered:
        for box in fragments[i].boxes:
            b = {}
            for col, r in box.items():
                if col in columns:
                    lo = None if r.min is None else logical_types.encode_scalar(types[col], r.min)
                    hi = None if r.max is None else logical_types.encode_scalar(types[col], r.max)
                    b[col] = (lo, hi, r.min_inclusive, r.max_inclusive)
            if b:
                out.append(b)
    return out


@dataclass
class PawDesign:
    """The designed tree and what it is predicted to read, per query, against the baselines."""

    tree: PawTree
    sample_rows: int
    table_rows: int
    b_min_rows: int
    costs: dict[str, dict[str, float]]  # method -> {"history": rows/query, "worst_future": rows/query}
    types: dict[str, str] = field(default_factory=dict)  # logical type of each tree column
    mbrs: list[list[dict[str, list[Any]]]] | None = None  # per leaf, its N_mbr MBRs (n_mbr > 0)

    def to_json(self) -> dict[str, Any]:
        """Summary, costs, the history Q_H and the extended queries Q_F* (Lemma 1), the data's
        domain and every leaf with its descriptor box; values encoded as
        :mod:`engine.core.logical_types` does (``types`` says how to decode them)."""
        cols = self.tree.columns
        lo, hi = self.tree.domain_
        return {"summary": {**self.tree.summary(), "sample_rows": self.sample_rows,
                            "table_rows": self.table_rows, "b_min_rows": self.b_min_rows},
                "costs": self.costs,
                "types": {c: self.types.get(c, "float") for c in cols},
                "domain": {c: [float(lo[j]), float(hi[j])] for j, c in enumerate(cols)},
                "queries": {"history": [q.to_bounds(cols) for q in self.tree.history_],
                            "extended": [q.to_bounds(cols) for q in self.tree.extended_]},
                "leaves": [{"id": lf.id, "rows": lf.rows, "irregular": lf.irregular, "box": box,
                            **({"mbrs": self.mbrs[lf.id]} if self.mbrs is not None else {})}
                           for lf, box in zip(self.tree.leaves_, self.tree.leaf_boxes())]}


def design_paw(sample: Mapping[str, np.ndarray], history: Sequence[Mapping[str, Any]], *, table_rows: int,
               b_min_rows: int, delta: float | str = "auto", alpha: float = 3.0, psi: str = "text",
               refine: bool = True, columns: Sequence[str] = (), types: Mapping[str, str] | None = None,
               n_mbr: int = 0, price: bool = True) -> PawDesign:
    """Design PAW on ``sample`` for the encoded history boxes; compare with the baselines
    (and, with ``n_mbr`` > 0, price the precise descriptors).

    ``price=False`` returns the tree alone (``costs`` empty, no descriptors): the pricing
    (section VI's comparison, shown in a real plan's reason) walks every history and
    extended query through four trees and the sample without taking part in the decision;
    on the demo at TPC-H SF 0.1 it took 101 of PAW's 108 s (the simulator's what-if,
    :class:`engine.sim.own_table.PawTreeOnly`)."""
    if int(n_mbr) < 0:
        raise InvalidParameterError(f"n_mbr must be >= 0 (0: no precise descriptors), got {n_mbr}")
    cols = tuple(columns) or tuple(sample)
    n = len(next(iter(sample.values()))) if sample else 0
    if n == 0 or not history:
        raise InvalidParameterError("a PAW design needs sampled rows and at least one query box on its columns")
    if int(b_min_rows) < 1:
        raise InvalidParameterError(f"b_min rows must be >= 1, got {b_min_rows}")
    if int(b_min_rows) > int(table_rows):  # Problem 1 has no solution: LB_b would exceed |D|
        raise InvalidParameterError(f"b_min_rows {int(b_min_rows):,} exceeds the table's {int(table_rows):,} rows: "
                                    "no layout can hold that many rows in every partition")
    b_fit = scale_min_leaf_rows(int(b_min_rows), n, int(table_rows))
    tree = PawTree(b_min=b_fit, delta=delta, alpha=alpha, psi=psi, refine=refine, columns=cols).fit(sample, history)
    if not price:
        return PawDesign(tree, n, int(table_rows), int(b_min_rows), {}, dict(types or {}))
    qd = qdtree(sample, history, b_fit, cols)
    kd = kd_tree(sample, b_fit, cols)
    x = np.column_stack([sample[c] for c in cols])
    scale = int(table_rows) / n
    future = [q.to_bounds(cols) for q in tree.extended_]
    lb_h = lower_bounds(x, [tree.as_box(q) for q in history], b_fit)
    lb_f = lower_bounds(x, tree.extended_, b_fit)

    def per_query(total: float, m: int) -> float:
        return float(total * scale / max(1, m))

    costs = {
        "paw": {"history": per_query(tree.cost(history), len(history)),
                "worst_future": per_query(tree.cost(tree.extended_), len(future))},
        "qdtree": {"history": per_query(qdtree_cost(qd, history), len(history)),
                   "worst_future": per_query(qdtree_cost(qd, future), len(future))},
        "kdtree": {"history": per_query(kd.cost(history), len(history)),
                   "worst_future": per_query(kd.cost(tree.extended_), len(future))},
        "lb_b": {"history": per_query(lb_h[1], len(history)), "worst_future": per_query(lb_f[1], len(future))},
        "lb": {"history": per_query(lb_h[0], len(history)), "worst_future": per_query(lb_f[0], len(future))},
    }
    mbrs = None
    if int(n_mbr) > 0:
        precise = PreciseDescriptors(tree, sample, int(n_mbr))
        costs["paw_precise"] = {"history": per_query(precise.cost(history), len(history)),
                                "worst_future": per_query(precise.cost(tree.extended_), len(future))}
        mbrs = precise.to_json()
    return PawDesign(tree, n, int(table_rows), int(b_min_rows), costs, dict(types or {}), mbrs)


def design_for_table(zonemaps: "ZoneMaps", fragments: Sequence[ScanFragment], *, delta: float | str = "auto",
                     b_min_rows: int | None = None, alpha: float = 3.0, psi: str = "text", refine: bool = True,
                     max_columns: int = 4, fit_rows: int = 200_000, seed: int = 0,
                     sampler: Sampler | None = None, n_mbr: int = 0, price: bool = True) -> PawDesign | None:
    """PAW on a snapshot (its files, sampled) for a window of fragments; None when no fragment
    constrains a numeric, date or timestamp column. ``b_min_rows`` defaults to the median
    file's rows (one partition fills one file). ``sampler`` draws the rows instead of the
    files (the simulator's in-memory table, :meth:`engine.policy.base.Policy.bind_sampler`).
    ``price=False``: the tree alone, not compared with the baselines (:func:`design_paw`)."""
    types = {c: z.ltype for c, z in zonemaps.columns.items()}
    cols = [c for c in choose_columns(fragments, types, max_columns) if bool(zonemaps.columns[c].valid.any())]
    history = history_boxes(fragments, types, cols)
    if not cols or not history or not len(zonemaps):
        return None
    b_min = int(b_min_rows or max(1, int(np.median(zonemaps.rows))))
    if sampler is None:
        sample = read_sample(list(zonemaps.paths), types, cols, fit_rows, seed)
    else:
        sample = {c: np.asarray(a, dtype=np.float64) for c, a in sampler(zonemaps, cols, fit_rows, seed).items()}
    return design_paw(sample, history, table_rows=int(zonemaps.rows.sum()), b_min_rows=b_min, delta=delta,
                      alpha=alpha, psi=psi, refine=refine, columns=cols, types=types, n_mbr=n_mbr,
                      price=price)
