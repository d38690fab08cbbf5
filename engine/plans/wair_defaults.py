"""WAIR's defaults that depend on the table, for the forms that offer them.

``k_max`` (the most partitions sorted together, section 3.3's "memory capacity for
reclustering micro-partitions") is derived from the memory budget and the table's median
partition unless set (:func:`engine.policy.wair.groups.derived_k_max`):
the CLI's ``plan preview/create`` without ``--k-max`` uses it, and the dashboard's
Recommendation page shows the same number as its default (not the paper's 64, which is
2 GiB over 32 MB partitions, whatever the table).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from engine.policy.wair.groups import derived_k_max

if TYPE_CHECKING:
    from engine.workspace import Workspace

__all__ = ["wair_k_max"]


def wair_k_max(ws: "Workspace", table: str) -> dict[str, Any]:
    """``{"k_max", "derived", "memory_budget_bytes", "median_partition_bytes"}``: the k_max
    WAIR uses on ``table``'s current snapshot when none is given (``derived`` True): the
    memory budget over the median partition's bytes, at least 2."""
    zm = ws.tables.current_snapshot(table).zonemaps()
    median = float(np.median(zm.bytes)) if len(zm.bytes) else 0.0
    return {"k_max": derived_k_max(None, zm, ws.settings.memory_budget_bytes), "derived": True,
            "memory_budget_bytes": int(ws.settings.memory_budget_bytes), "median_partition_bytes": median}
