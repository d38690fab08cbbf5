"""Baseline reclustering policies of WAIR section 6.3: NR, NN, QD and the oracle.

All subclass :class:`engine.policy.base.Policy`. Some baselines need facts a policy cannot
infer from one snapshot, which the batch protocol (``engine.sim.driver``) provides through
the base class's hooks (every policy receives them; most ignore them):

* ``begin_period(info: PeriodInfo)``: a new period starts; ``info`` carries the period's
  oracle key (the paper "strengthens the baselines that require a predefined sort order
  (NN, DD) by providing an oracle key that is most suitable for each period") and the
  previous period's queries (QD's training set).
* ``ingested(paths)``: the partitions the current batch's ingestion created (NN sorts them).
* ``before_queries(ctx) -> Proposal | None``: act after ingestion, before the batch's
  queries (QD's full repartition "at the start of a period"; the oracle's full sort).
  A policy with ``charged = False`` (the oracle) has that rewrite reported separately, not
  charged to its cost.

Policies:

* :class:`NoRecluster` (NR): never proposes anything.
* :class:`NewDataSort` (NN): Delta-Lake style, sorts each newly ingested batch on the
  period's key (a ZCube per batch); existing data is never touched.
* :class:`QdTreeRepartition` (QD): at each period start, builds a greedy Qd-tree
  (:class:`engine.layout.qdtree.QdTree`, cuts from the previous period's query bounds,
  leaves of at least one partition) and fully repartitions the table.
* :class:`Oracle`: before every batch's queries the whole table is sorted on the current
  period's key (Hilbert over two columns for a mix); its query cost is the reference
  lower bound and its reclustering is not charged.
* :class:`OracleKeyed`: gives a keyed policy (DD, DD-EP) each period's oracle key and
  rewrites its groups in the period's layout.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any, Mapping, Sequence

import numpy as np

from engine.core import logical_types
from engine.policy.base import Feedback, PeriodInfo, PlanGroup, Policy, PolicyContext, Proposal
from engine.policy.costmodel import groups_rewrite_cost
from engine.workload.model import ScanFragment

__all__ = ["NoRecluster", "NewDataSort", "QdTreeRepartition", "Oracle", "OracleKeyed",
           "encoded_boxes"]


def whole_table_proposal(ctx: PolicyContext, policy: str, layout: str, columns: Sequence[str],
                         paths: Sequence[str], reason: str, layout_params: Mapping[str, Any] | None = None,
                         params: Mapping[str, Any] | None = None) -> Proposal:
    """A proposal of one group: ``paths`` (the whole table, or NN's new partitions)
    rewritten in ``layout`` order over ``columns``, its rewrite cost from the cost model
    (:func:`engine.policy.costmodel.groups_rewrite_cost`), its predicted saving 0."""
    group = PlanGroup(partitions=tuple(str(p) for p in paths), layout=layout, columns=tuple(columns),
                      reason=reason, layout_params=dict(layout_params or {}))
    cost = groups_rewrite_cost(ctx.zonemaps, (group,), ctx.settings)
    return Proposal(policy=policy, params=dict(params or {}), groups=(group,), estimated_cost=cost,
                    predicted_saving={"bytes": 0.0, "cpu_seconds": 0.0, "money": 0.0,
                                      "window_queries": 0.0})


class NoRecluster(Policy):
    """NR: keeps the data in ingestion order."""

    name = "nr"

    def propose(self, ctx: PolicyContext) -> Proposal | None:
        return None


class NewDataSort(Policy):
    """NN: sort each newly ingested batch on the period's key; old data stays as it is.

    ``key``: fixed key columns (None: each period's oracle key, given by ``begin_period``);
    ``layout``: the ordering of a fixed key. Learned: ``columns_`` and ``layout_`` (the key
    in force), ``new_`` (the latest batch's partitions).
    """

    name = "nn"

    def __init__(self, key: Sequence[str] | None = None, layout: str = "sort") -> None:
        self.key = key
        self.layout = layout
        self.columns_: tuple[str, ...] = tuple(key) if key else ()
        self.layout_ = layout
        self.new_: list[str] = []

    def begin_period(self, info: PeriodInfo) -> None:
        if not self.key:
            self.columns_, self.layout_ = tuple(info.oracle_columns), info.oracle_layout

    def ingested(self, paths: Sequence[str]) -> None:
        self.new_ = list(paths)  # only the latest batch: NN clusters data as it arrives

    def propose(self, ctx: PolicyContext) -> Proposal | None:
        live = set(ctx.zonemaps.paths.tolist())
        new = [p for p in self.new_ if p in live]
        self.new_ = []
        if not new or not self.columns_:
            return None
        return whole_table_proposal(ctx, self.name, self.layout_, self.columns_, new,
                                    f"NN: sort the {len(new)} newly ingested partitions by "
                                    f"{', '.join(self.columns_)} ({self.layout_})",
                                    params={"key": list(self.columns_), "layout": self.layout_})


def encoded_boxes(fragments: Sequence[ScanFragment], types: Mapping[str, str],
                  columns: Sequence[str] | None = None) -> list[dict[str, tuple]]:
    """Query boxes in the encoded form :class:`engine.layout.qdtree.QdTree` takes."""
    out = []
    wanted = set(columns) if columns else None
    for f in fragments:
        for box in f.boxes:
            b = {}
            for col, r in box.items():
                if col not in types or (wanted is not None and col not in wanted):
                    continue
                ltype = types[col]
                lo = None if r.min is None else logical_types.encode_scalar(ltype, r.min)
                hi = None if r.max is None else logical_types.encode_scalar(ltype, r.max)
                b[col] = (lo, hi, r.min_inclusive, r.max_inclusive)
            if b:
                out.append(b)
    return out


class QdTreeRepartition(Policy):
    """QD: a greedy Qd-tree from the previous period's queries, full repartition at period start."""

    name = "qd"

    def __init__(self, max_columns: int = 4, max_leaves: int = 4096) -> None:
        self.max_columns = max_columns
        self.max_leaves = max_leaves
        self.due_: PeriodInfo | None = None  # the period whose start awaits its repartition

    def begin_period(self, info: PeriodInfo) -> None:
        self.due_ = info if info.recluster and len(info.history) else None

    def before_queries(self, ctx: PolicyContext) -> Proposal | None:
        info, self.due_ = self.due_, None
        if info is None:
            return None
        uses: Counter[str] = Counter()
        for f in info.history:
            for c in f.predicated_columns:
                uses[c] += 1
        types = dict(info.types) or {c: z.ltype for c, z in ctx.zonemaps.columns.items()}
        cols = [c for c, _ in uses.most_common() if c in types and c in ctx.zonemaps.columns
                and bool(ctx.zonemaps.columns[c].valid.any())][: self.max_columns]
        if not cols:
            return None
        queries = encoded_boxes(info.history, types, cols)
        target = info.target_rows or int(np.median(ctx.zonemaps.rows)) or 1
        params = {"min_leaf_rows": int(target), "queries": queries, "max_leaves": self.max_leaves}
        return whole_table_proposal(ctx, self.name, "qdtree", cols, list(ctx.zonemaps.paths),
                                    f"QD: full repartition with a greedy Qd-tree over {', '.join(cols)} "
                                    f"trained on the {len(info.history)} queries of period {info.period - 1}",
                                    layout_params=params,
                                    params={"columns": cols, "training_queries": len(info.history)})

    def propose(self, ctx: PolicyContext) -> Proposal | None:
        return None


class Oracle(Policy):
    """The table fully sorted on the period's key before every batch's queries (uncharged).

    Learned: ``columns_`` and ``layout_``, the period's oracle key."""

    name = "oracle"
    charged = False

    def __init__(self) -> None:
        self.columns_: tuple[str, ...] = ()
        self.layout_ = "sort"

    def begin_period(self, info: PeriodInfo) -> None:
        self.columns_, self.layout_ = tuple(info.oracle_columns), info.oracle_layout

    def before_queries(self, ctx: PolicyContext) -> Proposal | None:
        if not self.columns_ or len(ctx.zonemaps) == 0:
            return None
        return whole_table_proposal(ctx, self.name, self.layout_, self.columns_, list(ctx.zonemaps.paths),
                                    f"oracle: the whole table in {self.layout_} order of "
                                    f"{', '.join(self.columns_)}")

    def propose(self, ctx: PolicyContext) -> Proposal | None:
        return None


class OracleKeyed(Policy):
    """Give a keyed policy (DD, DD-EP) each period's oracle key, in the period's layout.

    ``estimator``: the keyed policy as configured (its ``key`` is replaced). At each period
    whose oracle key differs from the last one, a fresh copy (``estimator_``) is built with
    ``key`` set to the key's first column (DD "discards its earlier metrics"); for a
    multi-column key or another layout (a Hilbert mix), its groups are rewritten in the
    period's layout and columns, as the paper's DD "adopts a Hilbert-composed key".
    """

    name = "oracle-keyed"

    def __init__(self, estimator: Policy) -> None:
        self.estimator = estimator
        self.key_: tuple[tuple[str, ...], str] | None = None  # (columns, layout) in force
        self.estimator_: Policy | None = None

    def begin_period(self, info: PeriodInfo) -> None:
        key = (tuple(info.oracle_columns), info.oracle_layout)
        if key != self.key_ and info.oracle_columns:
            self.key_ = key
            params = {**self.estimator.get_params(), "key": key[0][0]}
            self.estimator_ = type(self.estimator)(**params)

    def propose(self, ctx: PolicyContext) -> Proposal | None:
        if self.estimator_ is None or self.key_ is None:
            return None
        p = self.estimator_.propose(ctx)
        columns, layout = self.key_
        if p is None or (layout == "sort" and len(columns) == 1):
            return p
        groups = tuple(dataclasses.replace(g, layout=layout, columns=columns) for g in p.groups)
        return dataclasses.replace(p, groups=groups)

    def observe(self, feedback: Feedback) -> None:
        if self.estimator_ is not None:
            self.estimator_.observe(feedback)
