"""Whole-table designs: preview a layout for a table without storing a plan.

``# --- PAW`` (issue 12): the PAW partition tree for the table's current snapshot and its
workload, with the predicted rows per query beside the Qd-tree, the k-d tree and the lower
bounds. Storing it as a plan is ``create_plan(settings, table, "paw", params)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.core.jsonable import plain_json
from engine.design.paw.designer import design_for_table
from engine.policy.paw import PawPolicy
from engine.table.store import TableStore
from engine.workload.store import WorkloadStore

if TYPE_CHECKING:
    from engine.core.config import Settings

__all__ = ["design_paw"]


# --- PAW
def design_paw(settings: "Settings", table: str, delta: Any = "auto", b_min_rows: int | None = None,
               alpha: float = 3.0, psi: str = "text", refine: bool = True, window: int | None = None,
               max_columns: int = 4, fit_rows: int = 200_000) -> dict[str, Any]:
    """The PAW design of ``table`` for its last ``window`` fragments (all when None).

    Returns ``{"table", "snapshot", "queries", "design"}`` where ``design`` holds the tree
    summary, the per-query costs (history and worst δ-similar future) of PAW, Qd-tree,
    k-d tree, LB_b and LBCost, and every leaf with its box; ``design`` is None (with a
    ``reason``) when no query constrains a numeric, date or timestamp column.
    """
    params = PawPolicy(delta=delta, b_min_rows=b_min_rows, alpha=alpha, psi=psi, refine=refine,
                       max_columns=max_columns, fit_rows=fit_rows)  # validates the parameters
    snapshot = TableStore(settings).current_snapshot(table)
    fragments = list(WorkloadStore(settings).fragments(snapshot.table or table))
    if window:
        fragments = fragments[-int(window):]
    design = design_for_table(snapshot.zonemaps(), fragments, delta=params.delta, b_min_rows=params.b_min_rows,
                              alpha=params.alpha, psi=params.psi, refine=params.refine,
                              max_columns=params.max_columns, fit_rows=params.fit_rows)
    out: dict[str, Any] = {"table": snapshot.table or table, "snapshot": snapshot.id, "queries": len(fragments),
                           "design": None if design is None else design.to_json()}
    if design is None:
        out["reason"] = "no query of the workload constrains a numeric, date or timestamp column"
    return plain_json(out)
