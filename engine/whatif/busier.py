"""What-if: WAIR's plan if each query of its window ran ``k`` times.

When WAIR declines because a rewrite does not pay back within its window, a DBA wants to
know how much busier the table must be before it does, and which plan WAIR would then
propose. WAIR counts queries, not time: its window is the last ``window`` queries, so a
busier table is one whose queries repeat more between loads (a dashboard refreshing, the
replay's ``--query-repeat K``), each saving ``k`` times. Equation 4 (with the losses
counted, :mod:`engine.policy.wair.policy`) compares ``k x saving`` (net of ``k x loss``)
with ``alpha x cost``: that workload is decided exactly as ``alpha / k`` decides today's.
:func:`busier_preview` therefore previews WAIR at ``alpha / k`` (nothing is stored, no
policy state changes), starting from the break-even its decline reports
(:mod:`engine.policy.breakeven`, or the grouped plan's cost over its saving) and stepping on
from each new decline, because a cut that grows with ``k`` is grouped and priced anew. Not
modelled: equation 5's credit (``c`` per query seen) and equation 2's cost limit, which a
busier workload does not scale.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from engine.plans import service

if TYPE_CHECKING:
    from engine.workspace import Workspace

__all__ = ["busier_preview"]

MAX_STEPS = 8
MARGIN = 1.001  # step just past a break-even, where the net cost is 0 and WAIR still declines


def busier_preview(ws: "Workspace", table: str, params: Mapping[str, Any] | None = None,
                   max_factor: float = 1000.0) -> dict[str, Any]:
    """``{"factor", "alpha", "plan", "steps"}``: the smallest busier factor found (1.0 when
    WAIR proposes today) at which WAIR proposes, its preview (``plan``: the answer of
    :func:`engine.api.preview_plan` at ``alpha``), and each step tried (``factor`` and the
    decline's ``reason``). ``plan`` is None and ``factor`` the last one tried when no step
    below ``max_factor`` proposes, or a decline names no break-even (nothing saves)."""
    params = dict(params or {})
    alpha0 = float(params.get("alpha") or 1.0)
    alpha, steps = alpha0, []
    for _ in range(MAX_STEPS):
        rec = service.preview_plan(ws, table, "wair", {**params, "alpha": alpha})
        factor = alpha0 / alpha
        if rec.get("status") != "no-action":
            return {"factor": factor, "alpha": alpha, "plan": rec, "steps": steps}
        steps.append({"factor": factor, "reason": rec.get("reason")})
        k = _break_even_factor(rec.get("details") or {})
        if k is None or factor * k * MARGIN > max_factor:
            break
        alpha = alpha / (k * MARGIN)
    return {"factor": alpha0 / alpha, "alpha": alpha, "plan": None, "steps": steps}


def _break_even_factor(details: Mapping[str, Any]) -> float | None:
    """How many times busier the decline says the workload must be, at its own alpha."""
    be = details.get("break_even")
    if be:
        return max(float(be["factor"]), 1.0)
    cost, saving = details.get("grouped_cost_cpu_s"), details.get("grouped_saving_cpu_s")
    if cost is not None and saving and float(saving) > 0:
        return max(float(details.get("alpha") or 1.0) * float(cost) / float(saving), 1.0)
    return None
