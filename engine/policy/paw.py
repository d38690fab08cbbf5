"""The ``paw`` policy: one full-table group laid out by a PAW partition tree (seed 001).

A DBA uses it when creating or migrating a table, or when the workload drifted too far for
incremental repair: the whole table is re-partitioned so that future queries *similar* to
the window's (δ-similar, PAW Def. 2) stay cheap. The tree is designed here, on a sample of
the snapshot's files (:mod:`engine.design.paw`), and travels in the plan as the group's
``layout_params["tree"]`` (layout ``paw``), so what is approved is exactly what runs.

Parameters: ``delta`` (a fraction of each column's domain, or ``"auto"``: δ′ from the two
halves of the window, §IV-E; ``"auto-nearest"``: the one-sided nearest distance instead),
``b_min_rows`` (rows of the table per partition at least; default the median file's rows),
``alpha`` and ``psi`` (the split policy Ψ), ``refine`` (k-d
refinement of large rectangular leaves), ``max_columns`` (query dimensions), ``fit_rows``
(the design sample), ``n_mbr`` (the precise descriptor plugin, §V-A; 0, the paper's
default, is off): with ``n_mbr`` > 0 the plan asks the executor (``layout_params["n_mbr"]``)
to write each file's rows in STR order as ``n_mbr`` row groups, so the row groups' min/max
are the leaf's MBRs, and the design prices that (``costs["paw_precise"]``).

In the simulator (and the what-if page) PAW behaves like QD: at each
reclustering period's start (:meth:`PawPolicy.begin_period`, then
:meth:`PawPolicy.before_queries`) the whole table is re-partitioned by a tree designed on
the previous period's queries; :meth:`PawPolicy.propose` stays silent once the period
protocol drives the policy. The simulator's partitions are not files, so it binds a row
sampler (:meth:`PawPolicy.bind_sampler`); real plans read a sample of the files.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

from engine.core.errors import InvalidParameterError
from engine.design.paw.designer import design_for_table
from engine.design.paw.similarity import DELTA_ESTIMATORS
from engine.design.paw.tree import PSI
from engine.policy.base import PeriodInfo, Policy, PolicyContext, Proposal, RowSampler
from engine.policy.baselines import whole_table_proposal
from engine.policy.costmodel import groups_rewrite_cost
from engine.workload.model import ScanFragment


def parse_delta(delta: Any) -> float | str:
    """``"auto"`` (δ′, PAW §IV-E), ``"auto-nearest"`` (the one-sided nearest distance, a
    departure) or a fraction in [0, 1] (a CLI string like ``"0.01"`` included). Above 1
    every extended query q* (Lemma 1: ±δ of the domain's length) covers the whole domain,
    the answer of δ = 1, so a larger value is a mistake and refused.

    >>> parse_delta("0.5"), parse_delta(1), parse_delta("Auto")
    (0.5, 1.0, 'auto')
    >>> parse_delta(1.5)
    Traceback (most recent call last):
    ...
    engine.core.errors.InvalidParameterError: delta must be a fraction of each column's domain, at most 1, got 1.5
    """
    if isinstance(delta, str) and delta.strip().lower() in DELTA_ESTIMATORS:
        return delta.strip().lower()
    try:
        value = float(delta)
    except (TypeError, ValueError):
        raise InvalidParameterError(f"delta must be a fraction of the domain (e.g. 0.01) or one of "
                                    f"{', '.join(DELTA_ESTIMATORS)}, got {delta!r}") from None
    if not value >= 0:
        raise InvalidParameterError(f"delta must be >= 0, got {delta!r}")
    if value > 1:
        raise InvalidParameterError(f"delta must be a fraction of each column's domain, at most 1, got {delta!r}")
    return value


class PawPolicy(Policy):
    """PAW: a whole-table partition tree robust to δ-similar future workloads."""

    name = "paw"

    def __init__(self, delta: Any = "auto", b_min_rows: int | None = None, alpha: float = 3.0,
                 psi: str = "text", refine: bool = True, max_columns: int = 4,
                 fit_rows: int = 200_000, seed: int = 0, n_mbr: int = 0) -> None:
        self.delta = parse_delta(delta)
        self.b_min_rows = b_min_rows
        self.alpha = float(alpha)
        self.psi = psi
        self.refine = refine if isinstance(refine, bool) else str(refine).lower() in ("1", "true", "yes")
        self.max_columns = int(max_columns)
        self.fit_rows = int(fit_rows)
        self.seed = int(seed)
        self.n_mbr = int(n_mbr)
        if self.n_mbr < 0:
            raise InvalidParameterError(f"n_mbr must be >= 0 (0: no precise descriptors), got {n_mbr}")
        if psi not in PSI:
            raise InvalidParameterError(f"psi must be one of {', '.join(PSI)}, got {psi!r}")
        if self.alpha <= 1:
            raise InvalidParameterError(f"alpha must be > 1, got {alpha}")
        if b_min_rows is not None and int(b_min_rows) < 1:
            raise InvalidParameterError(f"b_min_rows must be >= 1, got {b_min_rows}")
        self.sampler_: RowSampler | None = None  # None: sample the snapshot's files
        self.periodic_ = False  # the simulator's period protocol drives the policy
        self.due_: PeriodInfo | None = None  # the period whose start awaits its repartition

    def bind_sampler(self, sampler: RowSampler | None) -> None:
        self.sampler_ = sampler

    def begin_period(self, info: PeriodInfo) -> None:
        """As QD: a reclustering period with a previous period's queries repartitions at its start."""
        self.periodic_ = True
        self.due_ = info if info.recluster and len(info.history) else None

    def before_queries(self, ctx: PolicyContext) -> Proposal | None:
        info, self.due_ = self.due_, None
        if info is None:
            return None
        return self._design(ctx, info.history)

    def propose(self, ctx: PolicyContext) -> Proposal | None:
        if self.periodic_:
            self.last_decision_ = {"action": "none", "reason": "PAW repartitions at period starts only"}
            return None
        return self._design(ctx, ctx.window)

    def _design(self, ctx: PolicyContext, fragments: Sequence[ScanFragment]) -> Proposal | None:
        """The full-table proposal of a PAW tree designed for ``fragments``."""
        design = design_for_table(ctx.zonemaps, fragments, delta=self.delta, b_min_rows=self.b_min_rows,
                                  alpha=self.alpha, psi=self.psi, refine=self.refine,
                                  max_columns=self.max_columns, fit_rows=self.fit_rows, seed=self.seed,
                                  sampler=self.sampler_, n_mbr=self.n_mbr)
        if design is None:
            self.last_decision_ = {"action": "none", "reason": "no window query constrains a numeric, "
                                   "date or timestamp column of the table"}
            return None
        cols = list(design.tree.columns)
        summary, costs = design.to_json()["summary"], design.costs
        reason = (f"PAW: full repartition into {summary['leaves']} partitions over {', '.join(cols)} "
                  f"(δ = {summary['delta']:.4g}, b_min = {design.b_min_rows} rows); predicted rows per "
                  f"worst-case future query {costs['paw']['worst_future']:.0f} vs Qd-tree "
                  f"{costs['qdtree']['worst_future']:.0f}")
        notes = {"summary": summary, "costs": costs}
        layout_params: dict[str, Any] = {"tree": design.tree.router_json(), "design": notes}
        if self.n_mbr:
            layout_params["n_mbr"] = self.n_mbr
            reason += (f"; with {self.n_mbr} STR row groups per file (precise descriptors) "
                       f"{costs['paw_precise']['worst_future']:.0f}")
        proposal = whole_table_proposal(ctx, self.name, "paw", cols, list(ctx.zonemaps.paths), reason,
                                        layout_params=layout_params,
                                        params=self.get_params())
        self.last_decision_ = {"action": "propose", "reason": reason}
        cost = groups_rewrite_cost(ctx.zonemaps, proposal.groups, ctx.settings)
        return dataclasses.replace(proposal, details={"paw": design.to_json()}, estimated_cost=cost)
