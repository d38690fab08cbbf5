"""Engine calls that watch and stop a running plan: its progress and ETA, a cancel
request and the settling of a run stopped by one.

Beside :mod:`app.services`, with its settings: the control store (plans, progress) is
read uncached, since a run moves between two reruns of the page.
"""

from __future__ import annotations

from typing import Any

from app import services
from engine import api


def run_eta(plan_id: int) -> dict[str, Any]:
    """A run's progress and ETA (:func:`engine.api.run_eta`; uncached: it moves)."""
    return api.run_eta(services.workspace(), int(plan_id)).to_json()


def cancel_run(plan_id: int, actor: Any, reason: str = "") -> dict[str, Any]:
    """Cancel a running plan as the signed-in approver and wait for it to stop."""
    out = dict(api.cancel_plan(services.workspace(), int(plan_id), actor, reason or None))
    services.clear_caches()
    return out


def settle_cancelled(plan_id: int) -> dict[str, Any]:
    """Settle a run stopped by a cancel request whose canceller stopped waiting (a no-op
    without a pending request)."""
    return dict(api.settle_cancelled(services.workspace(), int(plan_id)))
