"""Whole-table designs: how a table should be laid out at all.

The façade of :mod:`engine.design` for the CLI and the dashboard. Each design has its own
section; the ``pto`` policy (:mod:`engine.policy.pto`) stores the same design as a plan.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.design.pto import baselines as pto_baselines
from engine.design.pto.optimizer import PtoConfig, run_on_files
from engine.policy.pto import design_details
from engine.table.store import TableStore
from engine.workload.store import WorkloadStore

if TYPE_CHECKING:
    from engine.core.config import Settings

__all__ = ["design_pto"]


# --- PTO
def design_pto(settings: "Settings", table: str, top_k: int = 3, label: str = "cost",
               lightweight: bool = False, exhaustive: bool = False) -> dict[str, Any]:
    """PTO's design for ``table`` from its imported workload (seed 002).

    Returns the ranked candidates (``predicted`` for every one, ``measured`` for the
    labelled training layouts), the ``choice`` and its ``reason``, and the baselines
    measured with the same label on the same sample: the layout as ingested
    (``default``), the human expert (Algorithm 4) and, with ``exhaustive``, the best of
    every candidate labelled (PTO's regret). Nothing is stored: ``plan create TABLE
    --policy pto`` stores the design as a proposed plan.
    """
    snapshot = TableStore(settings).current_snapshot(table)
    zm = snapshot.zonemaps()
    fragments = list(WorkloadStore(settings).fragments(snapshot.table))
    types = dict(snapshot.schema.columns)
    config = PtoConfig(top_k=int(top_k), label=label, lightweight=bool(lightweight))
    run = run_on_files(list(zm.paths), types, int(zm.bytes.sum()), fragments, config)
    file_bytes = float(zm.bytes.mean()) if len(zm) else 0.0
    found = [pto_baselines.default_layout(run, file_bytes), pto_baselines.human_expert(run)]
    if exhaustive:
        found.append(pto_baselines.exhaustive(run))
    return {"table": snapshot.table, "snapshot_id": snapshot.id, "fragments": len(fragments),
            **design_details(run), "baselines": [m.to_json() for m in found]}
