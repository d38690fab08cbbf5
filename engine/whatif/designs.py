"""Whole-table designs: how a table should be laid out at all, previewed without storing.

:mod:`engine.design` run on a table of the workspace, one section per design:

* ``# --- PAW``: the PAW partition tree for the table's current snapshot and its
  workload, with the predicted rows per query beside the Qd-tree, the k-d tree and the lower
  bounds; ``create_plan(ws, table, "paw", params)`` stores it as a plan.
* ``# --- PTO``: partition column, sort scheme, file and row-group size predicted
  by PTO; the ``pto`` policy (:mod:`engine.policy.pto`) stores the same design as a plan.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.core.jsonable import plain_json
from engine.design.paw.designer import design_for_table
from engine.design.paw.similarity import DELTA_ESTIMATORS
from engine.design.paw.tree import PSI
from engine.design.pto import baselines as pto_baselines
from engine.design.pto.optimizer import PtoConfig, run_on_files
from engine.policy.paw import PawPolicy
from engine.policy.pto import design_details

if TYPE_CHECKING:
    from engine.workspace import Workspace

__all__ = ["design_paw", "design_pto", "PAW_PSI", "PAW_DELTA_ESTIMATORS"]


# --- PAW
#: the split policy Ψ's readings: "text" (default), "printed" (eq. 4
#: as printed), "axis" (Alg. 2 only), "none" (no split)
PAW_PSI = PSI
#: ``delta`` words besides a fraction: "auto" (δ′, PAW §IV-E) and "auto-nearest" (a departure)
PAW_DELTA_ESTIMATORS = tuple(DELTA_ESTIMATORS)
def design_paw(ws: "Workspace", table: str, delta: Any = "auto", b_min_rows: int | None = None,
               alpha: float = 3.0, psi: str = "text", refine: bool = True, window: int | None = None,
               max_columns: int = 4, fit_rows: int = 200_000, n_mbr: int = 0) -> dict[str, Any]:
    """The PAW design of ``table`` for its last ``window`` fragments (all when None).

    Returns ``{"table", "snapshot", "queries", "design"}`` where ``design`` holds the tree
    summary, the per-query costs (history and worst δ-similar future) of PAW, Qd-tree,
    k-d tree, LB_b and LBCost, and every leaf with its box; ``design`` is None (with a
    ``reason``) when no query constrains a numeric, date or timestamp column.
    """
    params = PawPolicy(delta=delta, b_min_rows=b_min_rows, alpha=alpha, psi=psi, refine=refine,
                       max_columns=max_columns, fit_rows=fit_rows, n_mbr=n_mbr)  # validates the parameters
    snapshot = ws.tables.current_snapshot(table)
    fragments = list(ws.workloads.fragments(snapshot.table or table))
    if window:
        fragments = fragments[-int(window):]
    design = design_for_table(snapshot.zonemaps(), fragments, delta=params.delta, b_min_rows=params.b_min_rows,
                              alpha=params.alpha, psi=params.psi, refine=params.refine,
                              max_columns=params.max_columns, fit_rows=params.fit_rows, n_mbr=params.n_mbr)
    out: dict[str, Any] = {"table": snapshot.table or table, "snapshot": snapshot.id, "queries": len(fragments),
                           "design": None if design is None else design.to_json()}
    if design is None:
        out["reason"] = "no query of the workload constrains a numeric, date or timestamp column"
    return plain_json(out)


# --- PTO
def design_pto(ws: "Workspace", table: str, top_k: int = 3, label: str = "cost",
               lightweight: bool = False, exhaustive: bool = False, verify_top: int = 0,
               refine_sizes: bool = False, training_budget: int = 0,
               max_design_rows: int | None = None,
               open_cost_offset: bool = False) -> dict[str, Any]:
    """PTO's design for ``table`` from its imported workload (seed 002).

    Returns ``recommendation`` (the chosen ``partition_by`` (None: none), ``sort``,
    ``sort_kind``, ``sort_columns``, ``target_file_bytes``, ``row_group_bytes``, the
    run's ``label`` and its ``predicted`` and ``measured`` values (measured is None when
    the model predicted the choice), ``why``), ``comparison`` (the choice and the
    baselines, each with its layout and both labels measured on the same sample:
    ``cost`` and ``skip`` in % saved, higher is better), the ranked ``candidates``
    (``predicted`` for every one, ``measured`` for the labelled training layouts and the
    ``verified`` ones), and the run's evidence (``choice``, ``reason``, ``baselines``
    measured with the run's label, candidate lists, sample, timings). Baselines: the layout
    as ingested (``default``), the human expert (Algorithm 4) and, with ``exhaustive``, the
    best of every candidate labelled (PTO's regret). ``max_design_rows`` (ours; None or 0,
    the default: every row, the paper's procedure) runs the design on a Bernoulli sample of
    about that many rows (:attr:`PtoConfig.max_design_rows`; ``design_rows`` in the result
    says how many it ran on). ``open_cost_offset`` (ours, off by default:
    :attr:`PtoConfig.open_cost_offset`) computes the open cost of the files a fragment opens
    when only the partition column prunes instead of learning it (bench/pto/README.md). Nothing is stored: ``create_plan(ws, table, "pto",
    {"top_k", "label", "lightweight", "verify_top", "refine_sizes", "training_budget",
    "max_design_rows", "open_cost_offset"})`` stores the design as a proposed plan.
    """
    snapshot = ws.tables.current_snapshot(table)
    zm = snapshot.zonemaps()
    fragments = list(ws.workloads.fragments(snapshot.table))
    types = dict(snapshot.schema.columns)
    config = PtoConfig(top_k=int(top_k), label=label, lightweight=bool(lightweight), verify_top=int(verify_top),
                       refine_sizes=bool(refine_sizes), training_budget=int(training_budget),
                       max_design_rows=max_design_rows, open_cost_offset=bool(open_cost_offset))
    run = run_on_files(list(zm.paths), types, int(zm.bytes.sum()), fragments, config,
                       file_rows=zm.rows)  # with max_design_rows: only sampled files are read
    file_bytes = float(zm.bytes.mean()) if len(zm) else 0.0
    found = [pto_baselines.default_layout(run, file_bytes), pto_baselines.human_expert(run)]
    if exhaustive:
        found.append(pto_baselines.exhaustive(run))
    choice = run.choice
    recommendation = {**choice.layout.describe(), "label": config.label, "predicted": round(choice.predicted, 4),
                      "measured": None if choice.measured is None else round(choice.measured, 4),
                      "why": run.reason()}
    comparison = [{"name": "pto", **choice.layout.describe(), **pto_baselines.measure_all(run, choice.layout)}]
    comparison += [{"name": m.name, **m.layout.describe(), **pto_baselines.measure_all(run, m.layout)} for m in found]
    return {"table": snapshot.table, "snapshot_id": snapshot.id, "fragments": len(fragments),
            "recommendation": recommendation, "comparison": comparison,
            **design_details(run), "baselines": [m.to_json() for m in found]}
