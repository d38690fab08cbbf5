"""WAIR's learned state, readable and resettable: the adaptive window, credit and debt
(section 4.2 and equations 2 and 5) that decide whether the next plan is allowed.

After a rollback the learned credit and debt describe rewrites that no longer show in the
data, and a window adapted to them; :func:`rollback_and_reset` rolls back and then resets
the state when it is newer than the snapshot rolled back to.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.plans import service
from engine.plans.guarded import rollback_table
from engine.security.identity import Identity

if TYPE_CHECKING:
    from engine.workspace import Workspace

__all__ = ["wair_state", "reset_policy_state", "rollback_and_reset"]

#: window closes shown by :func:`wair_state` (the newest)
RECENT_WINDOWS = 10


def wair_state(ws: "Workspace", table: str) -> dict[str, Any]:
    """What WAIR remembers on ``table``, in the words the dashboard shows.

    ``saved`` is False when nothing was learned yet (the next decision starts from the
    parameters). ``credit_cpu_s`` is equation 5's net of past rewrites (realized savings
    minus reclustering costs; the per-query allowance ``c`` comes on top of it),
    ``debt_cpu_s`` equation 2's outstanding cost, ``windows`` the latest window closes
    (size before and after, verdict), ``plans`` WAIR's latest plans on the table.
    """
    state = service.policy_state(ws, table, "wair") or {}
    realized = float(state.get("realized_total") or 0.0)
    cost = float(state.get("cost_total") or 0.0)
    plans = [p for p in service.list_plans(ws, table) if p["policy"] == "wair"]
    return {
        "table": table,
        "saved": bool(state),
        "window_size": int(state["window_size"]) if state.get("window_size") else None,
        "window_start": state.get("window_start"),
        "runs": int(state.get("runs") or 0),
        "realized_cpu_s": realized,
        "predicted_cpu_s": float(state.get("predicted_total") or 0.0),
        "cost_cpu_s": cost,
        "credit_cpu_s": realized - cost,
        "debt_cpu_s": max(0.0, cost - realized),
        "windows_closed": int(state.get("windows") or 0),
        "windows": list(state.get("window_history") or [])[-RECENT_WINDOWS:],
        "plans": [{k: p[k] for k in ("id", "status", "base_snapshot", "partitions",
                                     "created_at")} for p in plans[-RECENT_WINDOWS:]],
    }


def reset_policy_state(ws: "Workspace", table: str, actor: Identity | None,
                       reason: str | None = None, policy: str = "wair") -> dict[str, Any]:
    """Forget what ``policy`` learned on ``table``, as a signed-in approver (audited
    ``policy-reset``); returns :func:`wair_state` after the reset."""
    service.reset_policy_state(ws, table, policy, actor=actor, reason=reason)
    return wair_state(ws, table)


def rollback_and_reset(ws: "Workspace", table: str, to_snapshot: str,
                       actor: Identity | None) -> dict[str, Any]:
    """:func:`engine.plans.guarded.rollback_table`, then reset WAIR's state if it is newer
    than ``to_snapshot``. Returns ``{"snapshot": the new snapshot id, "state_reset": bool}``."""
    snap = rollback_table(ws, table, to_snapshot, actor=actor)
    target = ws.tables.snapshot(table, str(to_snapshot))
    who = actor.name if isinstance(actor, Identity) else str(actor)
    reset = service.reset_state_after_rollback(ws, snap.table or table, target, who)
    return {"snapshot": snap.id, "state_reset": reset}
