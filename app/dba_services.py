"""Engine calls for the round-4 DBA controls (issue 14): a preview beside a stored plan,
what-if on the selected table, a run's ETA and its cancellation.

Kept apart from :mod:`app.services` (one module per area, fewer merge conflicts); the
settings and the cache rules are those of :mod:`app.services`: nothing here mutates a
cached return, and the control store (plans, progress) is read uncached.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import pandas as pd
import streamlit as st

from app import services, views
from engine import api


def compare_preview(preview: Mapping[str, Any], plan_id: int) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The unsaved preview beside stored plan ``plan_id``: the frame (as the stored-plan
    comparison shows it) and the partition overlap counts."""
    out = api.compare_preview(services.settings(), preview, int(plan_id))
    return views.compare_frame(out), {k: out[k] for k in ("shared_partitions", "only_a", "only_b",
                                                          "same_base_snapshot")}


# --------------------------------------------------------------------------- what-if
@st.cache_data(show_spinner=False, max_entries=16)
def _shift_choices(home_: str, table: str, snapshot: str, wkey: str) -> dict[str, Any]:
    return dict(api.whatif_shift_choices(services.settings(), table))


def shift_choices(table: str) -> dict[str, Any]:
    """Columns a shifted workload can move between (``columns`` name -> type, ``counts``
    of queries filtering each, ``default`` (source, target) or None); cached per snapshot
    and workload."""
    return _shift_choices(services.home(), table, services.current_snapshot_id(table),
                          services.workload_key(table))


def whatif_policies() -> dict[str, str]:
    """Policy name -> label for the what-if on a table (the simulator's and PTO)."""
    return {p["name"]: p["label"] for p in api.whatif_policies()}


def whatif_table(table: str, policies: Sequence[str], batches: int, shift: str | None,
                 sample_rows: int, progress: Callable[..., Any] | None = None,
                 cold_start: str = api.DEFAULT_COLD_START) -> dict[str, Any]:
    """The what-if on ``table`` itself (not cached: the page keeps the result in session
    state, with the snapshot it was computed on); ``cold_start``: which replayed rewrites
    pay the calibrated Spark session start (:data:`engine.api.COLD_START_MODES`)."""
    return dict(api.whatif_table(services.settings(), table, policies=list(policies),
                                 batches=int(batches), shift=shift, sample_rows=int(sample_rows),
                                 progress=progress, cold_start=cold_start))


# --------------------------------------------------------------------------- a running plan
def run_eta(plan_id: int) -> dict[str, Any]:
    """A run's progress and ETA (:func:`engine.api.run_eta`; uncached: it moves)."""
    return dict(api.run_eta(services.settings(), int(plan_id)))


def cancel_run(plan_id: int, actor: Any, reason: str = "") -> dict[str, Any]:
    """Cancel a running plan as the signed-in approver and wait for it to stop."""
    out = dict(api.cancel_plan(services.settings(), int(plan_id), actor, reason or None))
    services.clear_caches()
    return out


def settle_cancelled(plan_id: int) -> dict[str, Any]:
    """Settle a run stopped by a cancel request whose canceller stopped waiting (a no-op
    without a pending request)."""
    return dict(api.settle_cancelled(services.settings(), int(plan_id)))


def eta_text(info: Mapping[str, Any]) -> str:
    """One line: groups and rows done, elapsed, ETA and what it rests on.

    >>> eta_text({"groups_done": 1, "groups_total": 4, "rows_written": 2500, "rows_total": 10000,
    ...           "elapsed_s": 12.0, "eta_s": 30.5, "fraction": 0.2, "calibrated": True})
    'group 1 of 4 verified · 2,500 of 10,000 rows written · 12.0 s elapsed · about 30.5 s left (calibrated model and progress so far)'
    """
    basis = ("calibrated model" if info.get("calibrated") else "default-rate model (run "
             "`layout-advisor calibrate`)") + (" and progress so far" if info.get("fraction", 0) >= 0.05 else "")
    return (f"group {int(info.get('groups_done') or 0)} of {int(info.get('groups_total') or 0)} verified · "
            f"{int(info.get('rows_written') or 0):,} of {int(info.get('rows_total') or 0):,} rows written · "
            f"{views.fmt_seconds(info.get('elapsed_s'))} elapsed · about "
            f"{views.fmt_seconds(info.get('eta_s'))} left ({basis})")


def cancel_text(out: Mapping[str, Any]) -> str:
    """What became of a cancel request, in one sentence."""
    if out.get("cancelled"):
        return (f"Plan {out['id']} cancelled by {out.get('by')} at {out.get('at')}: nothing was "
                "committed, the files it wrote were removed, the table is unchanged.")
    if out.get("status") == "running":
        return (f"Cancel of plan {out['id']} requested; the run stops before its commit.")
    return f"Plan {out['id']} is {out.get('status')}: the cancel came too late."


def period_frame(result: Mapping[str, Any]) -> pd.DataFrame:
    """Query and reclustering CPU-seconds per policy and measured period (the replay, the
    shifted replay), from the what-if's per-batch records.

    >>> r = {"scenario": {"periods": [{"period": 2, "predicate": "a"}]}, "policies": {"nr": {
    ...     "label": "NR", "batches": [{"period": 2, "measured": True, "query_cpu_seconds": 1.5,
    ...     "recluster_cpu_seconds": 0.5}, {"period": 2, "measured": True,
    ...     "query_cpu_seconds": 1.0, "recluster_cpu_seconds": 0.0}]}}}
    >>> period_frame(r).to_dict("records")
    [{'policy': 'NR', 'period': 'P2 a', 'query CPU-s': 2.5, 'reclustering CPU-s': 0.5, 'total CPU-s': 3.0}]
    """
    names = {p["period"]: f"P{p['period']} {p['predicate']}" for p in (result.get("scenario") or {}).get("periods") or []}
    rows = []
    for res in (result.get("policies") or {}).values():
        for period in sorted({b["period"] for b in res.get("batches") or [] if b["measured"]}):
            bs = [b for b in res["batches"] if b["period"] == period and b["measured"]]
            q = float(sum(b["query_cpu_seconds"] for b in bs))
            r = float(sum(b["recluster_cpu_seconds"] for b in bs))
            rows.append({"policy": res.get("label"), "period": names.get(period, f"P{period}"),
                         "query CPU-s": q, "reclustering CPU-s": r, "total CPU-s": q + r})
    return pd.DataFrame(rows)
