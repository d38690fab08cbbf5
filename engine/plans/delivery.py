"""Did the run keep the plan's promise? The check right after the commit, and the undo.

Right after a run commits, :func:`engine.plans.service.run_plan` replays the decision's
window on the snapshots before and after (file statistics only, seconds: the
``re_estimated`` report of :mod:`engine.plans.feedback`). This module turns that report
into a verdict: a plan whose realized bytes saving is negative (the workload reads more
than before), or below ``min_realized_ratio`` of the predicted bytes, **underdelivered**.
The plan still ends ``succeeded`` (the data is committed and verified) with the flag and
the reason; with ``rollback_if_worse`` (the setting, or ``plan run --rollback-if-worse``)
the table is rolled back to the plan's base snapshot at once, audited with the figures, as
long as the plan's own commits are still the table's newest (nobody wrote after it).

Example (predicted 80 MiB, the run made the workload read 1 MiB more):
>>> d = judge({"saving_bytes": -2**20, "predicted_saving_bytes": 80 * 2**20}, 0.5)
>>> d.underdelivered, d.reason
(True, 'the workload now reads 1.0 MiB more than before (predicted: 80.0 MiB less)')
>>> judge({"saving_bytes": 70 * 2**20, "predicted_saving_bytes": 80 * 2**20}, 0.5).underdelivered
False
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Mapping

from engine.core.fmt import human_bytes
from engine.plans.approval import undo_rolled_back

if TYPE_CHECKING:
    from engine.plans.plan import Plan
    from engine.workspace import Workspace

__all__ = ["Delivery", "judge", "roll_back_if_worse", "settle_rollback"]


@dataclass(frozen=True)
class Delivery:
    """The verdict on one run: ``ratio`` is realized over predicted bytes saved (None when
    nothing was predicted or the window could not be replayed); ``rolled_back_to`` the
    snapshot the table was rolled back to (None: not rolled back), ``kept_because`` why an
    asked-for rollback did not happen."""

    underdelivered: bool
    ratio: float | None
    reason: str
    rolled_back_to: str | None = None
    kept_because: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"underdelivered": self.underdelivered, "ratio": self.ratio, "reason": self.reason,
                "rolled_back_to": self.rolled_back_to, "kept_because": self.kept_because}


def judge(report: Mapping[str, Any], min_ratio: float) -> Delivery:
    """The verdict on a ``re_estimated`` report (module docstring)."""
    if "saving_bytes" not in report:
        return Delivery(False, None, "the decision's window could not be replayed: "
                        f"{report.get('error', 'no report')}")
    saved = float(report["saving_bytes"])
    predicted = float(report.get("predicted_saving_bytes") or 0.0)
    ratio = saved / predicted if predicted > 0 else None
    if saved < 0:
        return Delivery(True, ratio, f"the workload now reads {human_bytes(-saved)} more than "
                        f"before (predicted: {human_bytes(predicted)} less)")
    if ratio is not None and ratio < min_ratio:
        return Delivery(True, ratio, f"saved {human_bytes(saved)}, {ratio:.0%} of the predicted "
                        f"{human_bytes(predicted)} (below min_realized_ratio {min_ratio:g})")
    shown = f"{ratio:.0%} of the predicted {human_bytes(predicted)}" if ratio is not None else "nothing predicted"
    return Delivery(False, ratio, f"saved {human_bytes(saved)}, {shown}")


def roll_back_if_worse(ws: "Workspace", plan: "Plan", result: Mapping[str, Any],
                       delivery: Delivery, actor: str) -> Delivery:
    """Roll an underdelivering run back to the plan's base snapshot (a new snapshot equal
    to it: nothing is deleted), audited as ``actor`` with the figures; returns the verdict
    naming the new snapshot (:func:`settle_rollback` then moves the plan). Kept (and said why) when another
    commit came after the plan's own: rolling back would undo someone else's write."""
    if not delivery.underdelivered:
        return delivery
    store = ws.tables
    ours = {str(s) for s in result.get("snapshots") or []} | {str(result.get("snapshot_id"))}
    current = store.current_snapshot(plan.table)
    snap = current
    while snap.id != plan.base_snapshot:
        if snap.id not in ours or not snap.parent:
            return replace(delivery, kept_because=f"snapshot {current.id} is not this plan's "
                           "own commit; roll back by hand if the newer writes may go too")
        snap = store.snapshot(plan.table, snap.parent)
    back = store.rollback(plan.table, plan.base_snapshot, actor=actor)
    ws.control.record(actor, "rollback", f"table {plan.table}: plan {plan.id} underdelivered "
                      f"({delivery.reason}); snapshot {current.id} -> {back.id} (equal to "
                      f"{plan.base_snapshot})")
    return replace(delivery, rolled_back_to=back.id)


def settle_rollback(ws: "Workspace", plan: "Plan", delivery: Delivery, actor: str) -> None:
    """After the plan was recorded ``succeeded``: a run :func:`roll_back_if_worse` undid
    becomes ``rolled-back`` (its commit left the table's lineage), audited as ``actor``."""
    if delivery.rolled_back_to is None:
        return
    undo_rolled_back(ws.plans, plan.table, plan.base_snapshot, delivery.rolled_back_to, actor)
    ws.emit("rollback", plan.table)
