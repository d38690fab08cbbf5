"""A plan's predicted effect on each query of its window and on the depth of
every column the workload filters, before anything runs (:mod:`engine.policy.impact`)."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from engine.policy.codec import group_from_json
from engine.policy.impact import plan_impact as _plan_impact
from engine.scan import rowgroups

if TYPE_CHECKING:
    from engine.workspace import Workspace

__all__ = ["plan_impact"]


def plan_impact(ws: "Workspace", table: str, groups: Sequence[Mapping[str, Any]],
                window_queries: int | None = None) -> dict[str, Any]:
    """For a plan's ``groups`` (as a plan or a preview gives them) on the current snapshot:
    ``queries`` (per query of the last ``window_queries`` fragments: partitions and bytes
    before and after) and ``columns`` (every filtered column's average depth before and
    after, most filtered first; a rise is a side effect on queries the old order served).
    With ``settings.prune_row_groups`` the bytes are charged by row groups, before on the
    snapshot's own and after on the row groups the plan would write
    (:func:`engine.policy.impact.predicted_with_row_groups`)."""
    snap = ws.tables.current_snapshot(table)
    fragments = list(ws.workloads.fragments(snap.table or table))
    if window_queries:
        fragments = fragments[-int(window_queries):]
    counts = Counter(c for f in fragments for c in f.predicated_columns)
    columns = [c for c, _ in counts.most_common() if c in snap.schema.names]
    plan_groups = [group_from_json(g) for g in groups]
    # with prune_row_groups, charged as the scan analysis charges (before and after)
    level = ws.settings.prune_row_groups
    groups_now = rowgroups.if_enabled(ws.tables, snap.table or table, snap)
    out = _plan_impact(snap.zonemaps(), plan_groups, fragments, columns, groups_now,
                       row_group_level=level, target=ws.tables.write_target(snap.table or table))
    for row in out["columns"]:
        row["queries_filtering"] = counts[row["column"]]
    return {"snapshot": snap.id, **out}
