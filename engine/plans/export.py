"""A plan taken out of the tool: as JSON (every field, for scripts and review tools), as a
Markdown runbook (what a DBA files in a change ticket: what, why, cost, the commands to
approve, run, verify and undo), and two plans side by side: two stored plans, or an unsaved
preview (same fields as a stored plan) beside a stored one, row by row with the same field
list, storing nothing.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Mapping

from engine.core.errors import InvalidParameterError
from engine.core.fmt import format_money, format_seconds, human_bytes
from engine.core.jsonable import plain_json
from engine.plans import service

if TYPE_CHECKING:
    from engine.workspace import Workspace

__all__ = ["plan_json", "plan_runbook", "compare_plans", "compare_preview", "PREVIEW_LABEL"]


def plan_json(ws: "Workspace", id: int) -> str:
    """The stored plan ``id`` as indented JSON: :func:`engine.api.show_plan`'s answer
    (groups with their partitions, cost, saving, curve, audit, result), infinities as null."""
    return json.dumps(plain_json(service.show_plan(ws, id), inf_as_none=True), indent=2,
                      sort_keys=True)


def plan_runbook(ws: "Workspace", id: int) -> str:
    """The stored plan ``id`` as a Markdown runbook for a change ticket."""
    plan = service.show_plan(ws, id)
    cost, saving = plan["estimated_cost"], plan["predicted_saving"]
    table, pid = plan["table"], plan["id"]
    be = plan.get("break_even_queries")
    lines = [
        f"# Runbook: recluster `{table}` (plan {pid}, {plan['policy']})", "",
        f"- Status: **{plan['status']}**, proposed by {plan.get('created_by') or 'unknown'} "
        f"at {str(plan['created_at'])[:19]} UTC",
        f"- Base snapshot: `{plan['base_snapshot']}` (the plan is stale once the table moves on)",
        f"- Rewrites {plan['partition_count']:,} partitions in {len(plan['groups'])} group(s): "
        f"reads {human_bytes(cost['bytes_read'])}, writes {human_bytes(cost['bytes_written'])}",
        f"- Estimated cost: {format_seconds(cost['cpu_seconds'])} CPU ({format_money(cost['money'])})",
        f"- Predicted saving: {format_seconds(saving.get('cpu_seconds'))} CPU and "
        f"{human_bytes(saving.get('bytes'))} less read per window of "
        f"{int(saving.get('window_queries') or 0)} queries",
        f"- Break-even: {'never' if be is None else f'{be:,.0f} queries'}", "",
        "## Groups", "",
        "| # | layout | key columns | partitions | predicted bytes saved | why |",
        "|---|---|---|---|---|---|",
    ]
    for k, group in enumerate(plan["groups"], 1):
        lines.append(f"| {k} | {group['layout']} | {', '.join(group['columns']) or '-'} | "
                     f"{len(group['partitions']):,} | {human_bytes(group['predicted_saving_bytes'])} | "
                     f"{_cell(group.get('reason'))} |")
    lines += ["", "## Steps", "",
              f"1. Review: `layout-advisor plan show {pid}`",
              f"2. Approve (an approver other than the proposer): `layout-advisor plan approve {pid} --as NAME`",
              f"3. Run: `layout-advisor plan run {pid} --as NAME` (rewrites only these partitions, "
              "checks row count and checksum per group, then commits one snapshot)",
              f"4. Verify: `layout-advisor plan show {pid}` (realized against predicted saving) and "
              f"`layout-advisor analyze {table}`",
              f"5. Undo if needed: `layout-advisor table rollback {table} --to {plan['base_snapshot']} "
              "--as ADMIN` (publishes the old version again; no file is deleted)", ""]
    result = plan.get("result")
    if result:
        lines += ["## Result", "",
                  f"Snapshot `{result.get('snapshot_id')}`: {result.get('partitions_removed')} "
                  f"partitions replaced by {result.get('partitions_added')} in "
                  f"{format_seconds(result.get('seconds'))}.", ""]
    return "\n".join(lines)


def _cell(text: Any) -> str:
    """Text safe inside a Markdown table cell."""
    return str(text or "").replace("|", "/").replace("\n", " ")


#: (label, how to read it from show_plan's answer) for :func:`compare_plans`
_ROWS: tuple[tuple[str, Any], ...] = (
    ("policy", lambda p: p["policy"]),
    ("status", lambda p: p["status"]),
    ("base snapshot", lambda p: p["base_snapshot"]),
    ("partitions rewritten", lambda p: p["partition_count"]),
    ("groups", lambda p: len(p["groups"])),
    ("layouts", lambda p: ", ".join(sorted({f"{g['layout']} {'+'.join(g['columns'])}"
                                             for g in p["groups"]}))),
    ("bytes read", lambda p: p["estimated_cost"]["bytes_read"]),
    ("bytes written", lambda p: p["estimated_cost"]["bytes_written"]),
    ("cost (CPU-s)", lambda p: p["estimated_cost"]["cpu_seconds"]),
    ("cost (money)", lambda p: p["estimated_cost"]["money"]),
    ("predicted saving per window (CPU-s)", lambda p: p["predicted_saving"].get("cpu_seconds")),
    ("predicted bytes saved per window", lambda p: p["predicted_saving"].get("bytes")),
    ("window (queries)", lambda p: p["predicted_saving"].get("window_queries")),
    ("break-even (queries)", lambda p: p.get("break_even_queries")),
    ("realized saving (CPU-s)", lambda p: ((p.get("result") or {}).get("realized") or {})
     .get("saving_cpu_seconds")),
)


def compare_plans(ws: "Workspace", a: int, b: int) -> dict[str, Any]:
    """Plans ``a`` and ``b`` side by side: ``rows`` of {"field", "a", "b", "difference"}
    (b - a for numbers), and how many partitions they share (``shared_partitions``,
    ``only_a``, ``only_b``)."""
    plan_a, plan_b = service.show_plan(ws, a), service.show_plan(ws, b)
    rows = []
    for label, get in _ROWS:
        va, vb = get(plan_a), get(plan_b)
        rows.append({"field": label, "a": va, "b": vb, "difference": _difference(va, vb)})
    parts_a, parts_b = _partitions(plan_a), _partitions(plan_b)
    return {"a": plan_a["id"], "b": plan_b["id"], "rows": rows,
            "shared_partitions": len(parts_a & parts_b), "only_a": len(parts_a - parts_b),
            "only_b": len(parts_b - parts_a)}


def _difference(a: Any, b: Any) -> float | None:
    numeric = (int, float)
    if isinstance(a, numeric) and isinstance(b, numeric) and not isinstance(a, bool):
        return float(b) - float(a)
    return None


def _partitions(plan: Mapping[str, Any]) -> set[str]:
    return {path for group in plan["groups"] for path in group["partitions"]}


#: how the unsaved side is named in the answer's ``a`` (the dashboard's column header)
PREVIEW_LABEL = "preview"


def compare_preview(ws: "Workspace", preview: Mapping[str, Any], b: int) -> dict[str, Any]:
    """The unsaved ``preview`` (as :func:`engine.api.preview_plan` returns it) beside stored
    plan ``b``: the answer of :func:`engine.api.compare_plans` with ``a`` = ``"preview"``.

    A ``no-action`` answer has nothing to compare and is refused in one line."""
    if preview.get("status") != "preview" or "groups" not in preview:
        raise InvalidParameterError(
            f"only a proposed preview can be compared; this one is {preview.get('status')!r}"
            + (f": {preview['reason']}" if preview.get("reason") else ""))
    plan_b = service.show_plan(ws, b)
    rows = []
    for label, get in _ROWS:
        va, vb = get(preview), get(plan_b)
        rows.append({"field": label, "a": va, "b": vb, "difference": _difference(va, vb)})
    parts_a, parts_b = _partitions(preview), _partitions(plan_b)
    return {"a": PREVIEW_LABEL, "b": plan_b["id"], "rows": rows,
            "same_base_snapshot": str(preview.get("base_snapshot")) == str(plan_b["base_snapshot"]),
            "shared_partitions": len(parts_a & parts_b), "only_a": len(parts_a - parts_b),
            "only_b": len(parts_b - parts_a)}
