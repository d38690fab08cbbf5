"""An unsaved preview beside a stored plan (issue 14 section 3: "compare any two plans side
by side", where one of them has not been stored yet).

:func:`engine.api.compare_plans` compares two stored plans; a preview
(:func:`engine.api.preview_plan`'s answer) has the same fields as a stored plan
(``policy``, ``status``, ``base_snapshot``, ``groups``, ``estimated_cost``,
``predicted_saving``, ``break_even_queries``), so it is compared row by row with the same
field list, and nothing is stored.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from engine.api.export import _ROWS, _difference, _partitions  # the one field list
from engine.core.errors import InvalidParameterError
from engine.plans import service

if TYPE_CHECKING:
    from engine.core.config import Settings

__all__ = ["compare_preview", "PREVIEW_LABEL"]

#: how the unsaved side is named in the answer's ``a`` (the dashboard's column header)
PREVIEW_LABEL = "preview"


def compare_preview(settings: "Settings", preview: Mapping[str, Any], b: int) -> dict[str, Any]:
    """The unsaved ``preview`` (as :func:`engine.api.preview_plan` returns it) beside stored
    plan ``b``: the answer of :func:`engine.api.compare_plans` with ``a`` = ``"preview"``.

    A ``no-action`` answer has nothing to compare and is refused in one line."""
    if preview.get("status") != "preview" or "groups" not in preview:
        raise InvalidParameterError(
            f"only a proposed preview can be compared; this one is {preview.get('status')!r}"
            + (f": {preview['reason']}" if preview.get("reason") else ""))
    plan_b = service.show_plan(settings, b)
    rows = []
    for label, get in _ROWS:
        va, vb = get(preview), get(plan_b)
        rows.append({"field": label, "a": va, "b": vb, "difference": _difference(va, vb)})
    parts_a, parts_b = _partitions(preview), _partitions(plan_b)
    return {"a": PREVIEW_LABEL, "b": plan_b["id"], "rows": rows,
            "same_base_snapshot": str(preview.get("base_snapshot")) == str(plan_b["base_snapshot"]),
            "shared_partitions": len(parts_a & parts_b), "only_a": len(parts_a - parts_b),
            "only_b": len(parts_b - parts_a)}
